import { boundMs, type RetentionBounds } from '../timeline/retention.ts';

/** Audio kept per track per live session by default (`VENUS_MEDIA_WINDOW_MS`). */
export const DEFAULT_MEDIA_WINDOW_MS = 60_000;
/** How long an ended session's media is kept by default (`VENUS_MEDIA_RETENTION`; 0 drops it at once). */
export const DEFAULT_MEDIA_RETENTION_MS = 60_000;

/** The bounds both media stores take, checked once where they are constructed. */
export interface MediaBounds extends RetentionBounds {
  /** Audio kept per track per live session, in ms of audio (not wall time). Default 60 s. */
  windowMs?: number;
}

export function mediaBounds(options: MediaBounds): Required<MediaBounds> {
  return {
    windowMs: boundMs(options.windowMs, DEFAULT_MEDIA_WINDOW_MS, 'media window', false),
    retentionMs: boundMs(options.retentionMs, DEFAULT_MEDIA_RETENTION_MS, 'media retention', true),
    now: options.now ?? Date.now,
  };
}

/** A copy that owns its buffer exactly: a view into a larger buffer would keep all of it alive. */
export function ownedCopy(pcm: Int16Array): Int16Array {
  return pcm.slice();
}
