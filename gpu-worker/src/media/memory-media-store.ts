import type { MediaRef, MediaStore, MediaTrack } from '@venus/protocol';
import { type MediaBounds, mediaBounds, ownedCopy } from './media-retention.ts';
import { TrackWindow, type WindowSegment } from './track-window.ts';

interface HeldSegment extends WindowSegment {
  pcm: Int16Array;
}

interface SessionMedia {
  tracks: Map<MediaTrack, TrackWindow<HeldSegment>>;
  epoch: string;
}

/** The most often the store looks for ended sessions past their retention without being called. */
const SWEEP_EVERY_MS = 10_000;

/**
 * Media store of the embedded default: per session and track, a ring of the most recent
 * `windowMs` of audio (default 60 s, `VENUS_MEDIA_WINDOW_MS`); an ended session's rings are dropped
 * `retentionMs` after `endSession` (default 60 s, `VENUS_MEDIA_RETENTION`).
 *
 * Memory bound: live sessions × windowMs × (32 kB/s user at 16 kHz + 48 kB/s assistant at 24 kHz),
 * about 4.8 MB per live session at the default window, plus the same for sessions that ended in
 * the last `retentionMs`. Expired sessions are swept on every call and on an unref'd timer.
 *
 * @example
 *   const media = new MemoryMediaStore({ windowMs: 30_000 });
 *   const ref = media.put('s1', 'user', pcm16k, 16_000);
 *   await media.read('s1', ref); // the samples, until they leave the window
 */
export class MemoryMediaStore implements MediaStore {
  readonly #bounds: Required<MediaBounds>;
  readonly #sessions = new Map<string, SessionMedia>();
  /** Ended sessions with the time their media goes; in end order, so the sweep stops at the first live one. */
  readonly #ended = new Map<string, number>();
  readonly #timer: ReturnType<typeof setInterval>;
  #epochs = 0;

  constructor(options: MediaBounds = {}) {
    this.#bounds = mediaBounds(options);
    const every = Math.max(1000, Math.min(SWEEP_EVERY_MS, this.#bounds.retentionMs));
    this.#timer = setInterval(() => this.#sweep(), every);
    this.#timer.unref();
  }

  put(session: string, track: MediaTrack, pcm: Int16Array, sampleRateHz: 16_000 | 24_000): MediaRef {
    this.#sweep();
    const window = this.#window(session, track);
    const durationMs = (pcm.length * 1000) / sampleRateHz;
    return window.push(durationMs, sampleRateHz, (ref, n) => ({ ref, n, pcm: ownedCopy(pcm) })).ref;
  }

  async read(session: string, ref: MediaRef): Promise<Int16Array | null> {
    this.#sweep();
    const held = this.#sessions.get(session)?.tracks.get(ref.track)?.find(ref);
    return held === undefined ? null : held.pcm.slice();
  }

  async recent(session: string, track: MediaTrack, windowMs: number): Promise<{ ref: MediaRef; pcm: Int16Array }[]> {
    this.#sweep();
    const window = this.#sessions.get(session)?.tracks.get(track);
    return (window?.newest(windowMs) ?? []).map(({ ref, pcm }) => ({ ref, pcm: pcm.slice() }));
  }

  endSession(session: string): void {
    if (!this.#sessions.has(session)) return;
    if (this.#bounds.retentionMs === 0) {
      this.#drop(session);
      return;
    }
    // Re-inserted so the map stays in order of expiry.
    this.#ended.delete(session);
    this.#ended.set(session, this.#bounds.now() + this.#bounds.retentionMs);
    this.#sweep();
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#sessions.clear();
    this.#ended.clear();
  }

  /** Sessions holding media now (live, or ended within the retention). */
  get sessions(): number {
    return this.#sessions.size;
  }

  #window(session: string, track: MediaTrack): TrackWindow<HeldSegment> {
    let media = this.#sessions.get(session);
    if (media === undefined) {
      media = { tracks: new Map(), epoch: (this.#epochs++).toString(36) };
      this.#sessions.set(session, media);
    }
    let window = media.tracks.get(track);
    if (window === undefined) {
      window = new TrackWindow<HeldSegment>(track, media.epoch, this.#bounds.windowMs);
      media.tracks.set(track, window);
    }
    return window;
  }

  #sweep(): void {
    const now = this.#bounds.now();
    for (const [session, expiresAt] of this.#ended) {
      if (expiresAt > now) return;
      this.#drop(session);
    }
  }

  #drop(session: string): void {
    this.#ended.delete(session);
    this.#sessions.delete(session);
  }
}
