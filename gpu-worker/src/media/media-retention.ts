import { VenusError } from '@venus/protocol';

/** Audio kept per track per live session by default (`VENUS_MEDIA_WINDOW_MS`). */
export const DEFAULT_MEDIA_WINDOW_MS = 60_000;
/** How long an ended session's media is kept by default (`VENUS_MEDIA_RETENTION`). */
export const DEFAULT_MEDIA_RETENTION_MS = 60_000;

/** The bounds both media stores take, checked once where they are constructed. */
export interface MediaBounds {
  /** Audio kept per track per live session, in ms of audio (not wall time). Default 60 s. */
  windowMs?: number;
  /** How long an ended session's media stays readable. 0 drops it at once. Default 60 s. */
  retentionMs?: number;
  /** The store's clock (epoch ms); tests pass a fake one. */
  now?: () => number;
}

export function mediaBounds(options: MediaBounds): Required<MediaBounds> {
  const windowMs = options.windowMs ?? DEFAULT_MEDIA_WINDOW_MS;
  const retentionMs = options.retentionMs ?? DEFAULT_MEDIA_RETENTION_MS;
  if (!(windowMs > 0)) throw new VenusError('invalid_arguments', `media window must be over 0 ms, not ${windowMs}`);
  if (!(retentionMs >= 0))
    throw new VenusError('invalid_arguments', `media retention must be ≥ 0 ms, not ${retentionMs}`);
  return { windowMs, retentionMs, now: options.now ?? Date.now };
}

/** A copy that owns its buffer exactly: a view into a larger buffer would keep all of it alive. */
export function ownedCopy(pcm: Int16Array): Int16Array {
  return pcm.slice();
}
