/**
 * A small reordering buffer for one inbound RTP stream of 20 ms G.711 frames, with loss
 * concealment. Frames come out in sequence order; a frame that has not arrived once `depth`
 * later ones have (default 3: 60 ms of delay at most) is declared lost and filled: the first lost
 * frame repeats the last good one (G.711's simplest concealment), further ones are silence, and a
 * gap longer than `maxConcealFrames` (default 5: 100 ms) is a discontinuity that is not filled.
 * Late and duplicate packets are dropped and counted. Memory: at most `depth` frames held.
 *
 * @example
 *   const jb = new JitterBuffer({ silence: 0xff, onFrame: (f) => call.receiveAudio(f) });
 *   jb.push(seq, payload);
 */
export interface JitterBufferOptions {
  /** The code of a zero sample in this law (0xff μ-law, 0xd5 A-law). */
  silence: number;
  onFrame(frame: Uint8Array): void;
  depth?: number;
  maxConcealFrames?: number;
}

export interface JitterBufferStats {
  received: number;
  late: number;
  duplicate: number;
  concealed: number;
  /** Gaps too long to fill (counted once each). */
  discontinuities: number;
}

/** Signed distance from a to b in 16-bit sequence space. */
export function seqDistance(a: number, b: number): number {
  return ((b - a + 0x8000) & 0xffff) - 0x8000;
}

export class JitterBuffer {
  readonly stats: JitterBufferStats = { received: 0, late: 0, duplicate: 0, concealed: 0, discontinuities: 0 };
  readonly #options: JitterBufferOptions;
  readonly #depth: number;
  readonly #maxConceal: number;
  readonly #held = new Map<number, Uint8Array>();
  #next: number | undefined;
  #last: Uint8Array | undefined;

  constructor(options: JitterBufferOptions) {
    this.#options = options;
    this.#depth = options.depth ?? 3;
    this.#maxConceal = options.maxConcealFrames ?? 5;
  }

  push(seq: number, frame: Uint8Array): void {
    this.stats.received += 1;
    if (this.#next === undefined) this.#next = seq;
    const ahead = seqDistance(this.#next, seq);
    if (ahead < 0) {
      this.stats.late += 1;
      return;
    }
    if (this.#held.has(seq)) {
      this.stats.duplicate += 1;
      return;
    }
    if (ahead > 1000) {
      // A jump (a new talkspurt after a restart, or a broken sender): start over from here.
      this.flush();
      this.#next = seq;
    }
    this.#held.set(seq, frame);
    this.#drain();
    while (this.#held.size >= this.#depth) this.#skipMissing();
  }

  /** Releases what is held, in order, concealing the holes between (end of call or of a stream). */
  flush(): void {
    while (this.#held.size > 0) this.#skipMissing();
  }

  #drain(): void {
    for (;;) {
      const next = this.#next!;
      const frame = this.#held.get(next);
      if (frame === undefined) return;
      this.#held.delete(next);
      this.#emit(frame);
      this.#next = (next + 1) & 0xffff;
    }
  }

  /** The expected frame is lost: conceal up to the next held frame, then drain. */
  #skipMissing(): void {
    let nearest = Number.POSITIVE_INFINITY;
    for (const seq of this.#held.keys()) nearest = Math.min(nearest, seqDistance(this.#next!, seq));
    const gap = nearest;
    if (gap <= this.#maxConceal) {
      for (let i = 0; i < gap; i++) {
        const fill =
          i === 0 && this.#last !== undefined
            ? this.#last
            : new Uint8Array(this.#last?.length ?? 160).fill(this.#options.silence);
        this.stats.concealed += 1;
        this.#emit(fill);
      }
    } else {
      this.stats.discontinuities += 1;
    }
    this.#next = (this.#next! + gap) & 0xffff;
    this.#drain();
  }

  #emit(frame: Uint8Array): void {
    this.#last = frame;
    this.#options.onFrame(frame);
  }
}
