import {
  createMediaStore,
  createTimelineStore,
  DEFAULT_MEDIA_RETENTION_MS,
  DEFAULT_MEDIA_WINDOW_MS,
  DEFAULT_TIMELINE_MAX_EVENTS,
  DEFAULT_TIMELINE_RETENTION_MS,
  parseDurationMs,
} from '@venus/gpu-worker';
import { type MediaStore, type TimelineStore, VenusError } from '@venus/protocol';

/** What a session host keeps per session, and for how long (README "Retention"). */
export interface SessionStorageSettings {
  /** VENUS_TIMELINE_RETENTION: how long an ended session's timeline is kept (default 15m). */
  timelineRetentionMs: number;
  /** VENUS_TIMELINE_MAX_EVENTS: events kept per session at least, older ones trimmed (default 50,000). */
  timelineMaxEvents: number;
  /** VENUS_MEDIA_WINDOW_MS: audio kept per track per live session (default 60,000). */
  mediaWindowMs: number;
  /** VENUS_MEDIA_RETENTION: how long an ended session's audio is kept (default 60s). */
  mediaRetentionMs: number;
}

/**
 * Reads the retention settings. Durations take `15m`, `900s`, `250ms` or bare milliseconds.
 * A bad value stops the start with `invalid_arguments` naming the variable.
 *
 * @example
 *   const settings = storageSettingsFromEnv({ VENUS_TIMELINE_RETENTION: '5m' });
 */
export function storageSettingsFromEnv(env: Record<string, string | undefined>): SessionStorageSettings {
  return {
    timelineRetentionMs: parseDurationMs(
      env.VENUS_TIMELINE_RETENTION,
      DEFAULT_TIMELINE_RETENTION_MS,
      'VENUS_TIMELINE_RETENTION',
    ),
    timelineMaxEvents: positiveInt(
      env.VENUS_TIMELINE_MAX_EVENTS,
      DEFAULT_TIMELINE_MAX_EVENTS,
      'VENUS_TIMELINE_MAX_EVENTS',
    ),
    mediaWindowMs: positiveInt(env.VENUS_MEDIA_WINDOW_MS, DEFAULT_MEDIA_WINDOW_MS, 'VENUS_MEDIA_WINDOW_MS'),
    mediaRetentionMs: parseDurationMs(env.VENUS_MEDIA_RETENTION, DEFAULT_MEDIA_RETENTION_MS, 'VENUS_MEDIA_RETENTION'),
  };
}

export interface SessionStorageOptions {
  redisUrl?: string | undefined;
  prefix?: string;
  settings: SessionStorageSettings;
}

/**
 * The timeline store of a session host: Redis Streams when a URL is given, memory otherwise,
 * bounded by the settings.
 *
 * @example
 *   const store = createSessionTimeline({ redisUrl, prefix: 'venus:', settings });
 */
export function createSessionTimeline(options: SessionStorageOptions): TimelineStore {
  const { timelineRetentionMs: retentionMs, timelineMaxEvents: maxEvents } = options.settings;
  return createTimelineStore({ ...redisOf(options), retentionMs, maxEvents });
}

/**
 * The media store of a session host, on the same backend as its timeline (in Redis the recent
 * audio window survives the worker), bounded by the settings.
 *
 * @example
 *   const host = new SessionHost({ model, executor, store, media: createSessionMedia({ settings }) });
 */
export function createSessionMedia(options: SessionStorageOptions): MediaStore {
  const { mediaWindowMs: windowMs, mediaRetentionMs: retentionMs } = options.settings;
  return createMediaStore({ ...redisOf(options), windowMs, retentionMs });
}

function redisOf(options: SessionStorageOptions): { redisUrl?: string; prefix?: string } {
  return options.redisUrl ? { redisUrl: options.redisUrl, prefix: options.prefix ?? 'venus:' } : {};
}

function positiveInt(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value.trim() === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0)
    throw new VenusError('invalid_arguments', `${name}=${value} is not a positive integer`);
  return n;
}
