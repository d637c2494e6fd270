import { type Clock, systemClock } from '../realtime/clock.ts';

export interface RtpPlayoutOptions {
  /** The client has heard `playedMs` of this item (monotonic per item). */
  onAck(itemId: string, playedMs: number): void;
  clock?: Clock;
  /** From a frame's send time to its playout: the sender's lead plus the receiver's jitter buffer (default 80 ms). */
  playoutDelayMs?: number;
  /** How often progress is reported while audio flows (default 250 ms). */
  intervalMs?: number;
}

/** Finished items remembered, so an item's positions stay monotonic if its audio resumes. */
const REMEMBERED_ITEMS = 64;

interface Item {
  /** Send time of each 20 ms frame not yet counted as played. */
  pending: { at: number; ms: number }[];
  playedMs: number;
  ackedMs: number;
}

/**
 * What a WebRTC client has heard, known from when the edge sent it. Audio goes out as RTP at the
 * pace it plays, so a frame is heard about `playoutDelayMs` after it leaves; the estimate counts
 * frames whose send time is that far in the past, and reports each item's position every
 * `intervalMs` while audio flows and once more, in full, after its last frame has played. Frames
 * never sent (dropped by a barge-in's flush) are never counted.
 *
 * (The realtime core's PlayoutEstimator models a client that receives audio in bursts and plays
 * it out from a buffer; here the edge itself paces the audio, so the send log is the better model.)
 *
 * @example
 *   const playout = new RtpPlayout({ onAck: (id, ms) => ack(id, ms) });
 *   sender.onFrameSent = (id, ms) => playout.frameSent(id, ms);
 */
export class RtpPlayout {
  readonly #options: RtpPlayoutOptions;
  readonly #clock: Clock;
  readonly #delayMs: number;
  readonly #intervalMs: number;
  readonly #items = new Map<string, Item>();
  #timer: unknown;
  #stopped = false;

  constructor(options: RtpPlayoutOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#delayMs = options.playoutDelayMs ?? 80;
    this.#intervalMs = options.intervalMs ?? 250;
  }

  frameSent(itemId: string, ms: number): void {
    if (this.#stopped) return;
    let item = this.#items.get(itemId);
    if (item === undefined) {
      item = { pending: [], playedMs: 0, ackedMs: 0 };
      this.#items.set(itemId, item);
      this.#forgetOldest();
    }
    item.pending.push({ at: this.#clock.now(), ms });
    this.#timer ??= this.#clock.setTimeout(() => this.#tick(), this.#intervalMs);
  }

  /** Whether any sent audio is (by estimate) still to be heard. */
  isPlaying(): boolean {
    for (const item of this.#items.values()) if (item.pending.length > 0) return true;
    return false;
  }

  stop(): void {
    this.#stopped = true;
    this.#items.clear();
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #forgetOldest(): void {
    if (this.#items.size <= REMEMBERED_ITEMS) return;
    for (const [itemId, item] of this.#items) {
      if (this.#items.size <= REMEMBERED_ITEMS) break;
      if (item.pending.length === 0) this.#items.delete(itemId);
    }
  }

  #tick(): void {
    this.#timer = undefined;
    const heardBy = this.#clock.now() - this.#delayMs;
    let waiting = false;
    for (const [itemId, item] of this.#items) {
      while (item.pending.length > 0 && item.pending[0]!.at <= heardBy) item.playedMs += item.pending.shift()!.ms;
      if (item.playedMs > item.ackedMs) {
        item.ackedMs = item.playedMs;
        this.#options.onAck(itemId, item.playedMs);
      }
      if (item.pending.length > 0) waiting = true;
    }
    if (waiting && !this.#stopped) this.#timer = this.#clock.setTimeout(() => this.#tick(), this.#intervalMs);
  }
}
