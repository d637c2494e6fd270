import { VenusError } from '@venus/protocol';
import { boundMs, DEFAULT_TIMELINE_RETENTION_MS, type RetentionBounds } from './retention.ts';

/** Events kept per session by default (`VENUS_TIMELINE_MAX_EVENTS`): ~17 minutes of 20 ms microphone frames. */
export const DEFAULT_TIMELINE_MAX_EVENTS = 50_000;

/** The bounds both timeline stores take (retention default 15 min, `VENUS_TIMELINE_RETENTION`). */
export interface TimelineBounds extends RetentionBounds {
  /** Events kept per session at least; older ones are trimmed (default 50,000). */
  maxEvents?: number;
}

export function timelineBounds(options: TimelineBounds): Required<TimelineBounds> {
  const maxEvents = options.maxEvents ?? DEFAULT_TIMELINE_MAX_EVENTS;
  if (!(Number.isInteger(maxEvents) && maxEvents > 0)) {
    throw new VenusError('invalid_arguments', `timeline maxEvents must be a positive integer, not ${maxEvents}`);
  }
  const retentionMs = boundMs(options.retentionMs, DEFAULT_TIMELINE_RETENTION_MS, 'timeline retention', true);
  return { retentionMs, maxEvents, now: options.now ?? Date.now };
}

/**
 * What a batch says about its session's life: `closed` when it records the end (the host appends
 * `session.closed` when a session closes), `opened` when it (re)opens it (every open appends a
 * `session.incarnation`). The last of the two in the batch wins.
 */
export function lifeChange(events: readonly { type: string }[]): 'closed' | 'opened' | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const type = events[i]!.type;
    if (type === 'session.closed') return 'closed';
    if (type === 'session.incarnation') return 'opened';
  }
  return undefined;
}
