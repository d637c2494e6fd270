import type { MediaRef, MediaTrack } from '@venus/protocol';

/** One segment a track window holds: its reference and its number on the track (from 0). */
export interface WindowSegment {
  ref: MediaRef;
  n: number;
}

/** How many evicted slots may pile up at the front before the array is compacted. */
const COMPACT_AFTER = 1024;

/**
 * The most recent `windowMs` of one track of one session, as a ring of segments: the bound both
 * media stores keep (the memory store holds the samples in it, the Redis store only the refs, to
 * know what to delete). It keeps the newest segments whose total duration just reaches the window
 * (at most one segment more than the window), and numbers segments so a ref finds its slot in O(1).
 *
 * Segment ids are `${epoch}:${n}`: the epoch tells apart two lives of a session id in one store
 * (a session whose media was dropped and that then wrote again), so an old ref never reads new sound.
 *
 * @example
 *   const window = new TrackWindow<WindowSegment>('user', 'e1', 60_000);
 *   const { ref, evicted } = window.push(40, 16_000, (ref, n) => ({ ref, n }));
 */
export class TrackWindow<S extends WindowSegment> {
  readonly #segments: S[] = [];
  #head = 0;
  #heldMs = 0;
  #offsetMs = 0;
  #next = 0;

  constructor(
    readonly track: MediaTrack,
    readonly epoch: string,
    readonly windowMs: number,
  ) {}

  /** Appends a segment of `durationMs`; returns its ref and the segments that fell out of the window. */
  push(
    durationMs: number,
    sampleRateHz: 16_000 | 24_000,
    make: (ref: MediaRef, n: number) => S,
  ): { ref: MediaRef; evicted: S[] } {
    const n = this.#next++;
    const ref: MediaRef = {
      segmentId: `${this.epoch}:${n}`,
      track: this.track,
      offsetMs: this.#offsetMs,
      durationMs,
      sampleRateHz,
    };
    this.#offsetMs += durationMs;
    this.#segments.push(make(ref, n));
    this.#heldMs += durationMs;
    const evicted: S[] = [];
    while (this.#head < this.#segments.length) {
      const oldest = this.#segments[this.#head]!;
      if (this.#heldMs - oldest.ref.durationMs < this.windowMs) break;
      evicted.push(oldest);
      this.#heldMs -= oldest.ref.durationMs;
      this.#head++;
    }
    if (this.#head >= COMPACT_AFTER) {
      this.#segments.splice(0, this.#head);
      this.#head = 0;
    }
    return { ref, evicted };
  }

  /** The held segment a ref names, if the ref is this window's and the segment is still held. */
  find(ref: MediaRef): S | undefined {
    const [epoch, number] = ref.segmentId.split(':');
    if (epoch !== this.epoch || number === undefined) return undefined;
    const first = this.#segments[this.#head];
    const n = Number(number);
    if (first === undefined || !(n >= first.n)) return undefined;
    const segment = this.#segments[this.#head + (n - first.n)];
    return segment?.ref.segmentId === ref.segmentId ? segment : undefined;
  }

  /** The newest held segments that together cover `windowMs` (or all there are), oldest first. */
  newest(windowMs: number): S[] {
    const out: S[] = [];
    let coveredMs = 0;
    for (let i = this.#segments.length - 1; i >= this.#head && coveredMs < windowMs; i--) {
      const segment = this.#segments[i]!;
      out.push(segment);
      coveredMs += segment.ref.durationMs;
    }
    return out.reverse();
  }

  /** How many segments are held. */
  get size(): number {
    return this.#segments.length - this.#head;
  }
}
