import { VenusError } from '@venus/protocol';

/** How long ended sessions' timelines are kept by default (`VENUS_TIMELINE_RETENTION`). */
export const DEFAULT_TIMELINE_RETENTION_MS = 15 * 60_000;

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/;

/**
 * A retention setting as an operator writes it: `15m`, `900s`, `1.5h`, `250ms`, or a bare number
 * of milliseconds (`900000`). Undefined or empty gives the fallback; anything else is refused with
 * the setting's name, so a typo fails start instead of keeping data forever (or not at all).
 *
 * @example
 *   parseDurationMs(process.env.VENUS_TIMELINE_RETENTION, DEFAULT_TIMELINE_RETENTION_MS, 'VENUS_TIMELINE_RETENTION');
 */
export function parseDurationMs(value: string | undefined, fallbackMs: number, name: string): number {
  const text = value?.trim() ?? '';
  if (text === '') return fallbackMs;
  const match = DURATION.exec(text);
  if (match === null) {
    throw new VenusError(
      'invalid_arguments',
      `${name}=${value} is not a duration: write e.g. 15m, 900s, 250ms or 900000`,
    );
  }
  const unit = (match[2] ?? 'ms') as keyof typeof UNIT_MS;
  return Math.round(Number(match[1]) * UNIT_MS[unit]);
}

/** What every bounded store takes: how long an ended session's data is kept, and its clock. */
export interface RetentionBounds {
  /** How long an ended session's data stays (ms). 0 deletes it at once. */
  retentionMs?: number;
  /** The store's clock (epoch ms); tests pass a fake one. */
  now?: () => number;
}

/** A bound in ms, or its default; refused with a coded error when it is negative (or 0 where 0 makes no sense). */
export function boundMs(value: number | undefined, fallbackMs: number, what: string, allowZero: boolean): number {
  const ms = value ?? fallbackMs;
  if (!(allowZero ? ms >= 0 : ms > 0))
    throw new VenusError('invalid_arguments', `${what} must be ${allowZero ? '≥ 0' : 'over 0'} ms, not ${ms}`);
  return ms;
}
