import { type Clock, systemClock } from '../realtime/clock.ts';
import { OPUS_FRAME_MS, OPUS_RTP_CLOCK_HZ, type OpusCodec } from './opus-codec.ts';

/** One outbound RTP packet before the peer connection stamps SSRC and payload type. */
export interface OutboundRtp {
  sequenceNumber: number;
  timestamp: number;
  /** Set on the first packet of a talkspurt, so the receiver may re-sync its jitter buffer. */
  marker: boolean;
  payload: Uint8Array;
}

export interface PacedOpusSenderOptions {
  codec: OpusCodec;
  send(packet: OutboundRtp): void;
  /** A frame of `itemId`'s audio went out. */
  onFrameSent?(itemId: string, ms: number): void;
  /** The last audio of a finished item went out. */
  onItemSent?(itemId: string): void;
  clock?: Clock;
  /** How far ahead of real time frames may go out (default 40 ms): covers timer lateness without a queue at the receiver. */
  leadMs?: number;
  /** A partial frame waits this long for more audio of its item before it is padded with silence and sent. */
  partialWaitMs?: number;
}

interface Frame {
  itemId: string;
  pcm: Int16Array;
  last: boolean;
}

export interface PacedOpusSenderStats {
  packetsSent: number;
  /** Frames dropped by `flush` (barge-in) before they were sent. */
  framesFlushed: number;
  /** Times the schedule fell more than 100 ms behind (a stalled event loop) and was rebased. */
  rebases: number;
}

const FRAME_TICKS = (OPUS_RTP_CLOCK_HZ * OPUS_FRAME_MS) / 1000;
const MAX_LAG_MS = 100;

/**
 * Turns the assistant's audio into RTP at the pace it plays: 24 kHz PCM is cut into 20 ms frames,
 * each encoded to Opus only when its send time comes (so a barge-in's `flush` wastes no encoding),
 * with contiguous sequence numbers, a 48 kHz timestamp that also advances across silences, and the
 * marker bit on the first packet of each talkspurt. Nothing is sent while there is nothing to say.
 *
 * Knowing what it has sent and when is what makes this the source of the session's playout
 * estimate: `onFrameSent` reports each frame the moment it leaves.
 *
 * @example
 *   const sender = new PacedOpusSender({ codec, send: (p) => sendRtp(p), onFrameSent: (id, ms) => est.audioSent(id, ms) });
 *   sender.enqueue('item_1', pcm24k);
 *   sender.finish('item_1');
 *   sender.flush(); // the user barged in
 */
export class PacedOpusSender {
  readonly #options: PacedOpusSenderOptions;
  readonly #codec: OpusCodec;
  readonly #clock: Clock;
  readonly #leadMs: number;
  readonly #partialWaitMs: number;
  readonly #frames: Frame[] = [];
  #partial: { itemId: string; pcm: Int16Array; filled: number; since: number } | undefined;
  #sequence = randomUint(0xffff);
  #timestamp = randomUint(0xffffffff);
  /** Clock time at which the next frame is due; undefined while idle (between talkspurts). */
  #nextAt: number | undefined;
  /** Clock time the last sent frame ends, to advance the RTP timestamp across a silence. */
  #lastEndAt: number | undefined;
  #timer: unknown;
  #markerDue = false;
  #closed = false;
  readonly #stats: PacedOpusSenderStats = { packetsSent: 0, framesFlushed: 0, rebases: 0 };

  constructor(options: PacedOpusSenderOptions) {
    this.#options = options;
    this.#codec = options.codec;
    this.#clock = options.clock ?? systemClock;
    this.#leadMs = options.leadMs ?? 40;
    this.#partialWaitMs = options.partialWaitMs ?? 60;
  }

  get stats(): Readonly<PacedOpusSenderStats> {
    return this.#stats;
  }

  /** Milliseconds of audio waiting to be sent. */
  get queuedMs(): number {
    const partial = this.#partial === undefined ? 0 : OPUS_FRAME_MS;
    return this.#frames.length * OPUS_FRAME_MS + partial;
  }

  enqueue(itemId: string, pcm: Int16Array): void {
    if (this.#closed || pcm.length === 0) return;
    if (this.#partial !== undefined && this.#partial.itemId !== itemId) this.#padPartial(false);
    const size = this.#codec.frameSamples;
    let at = 0;
    if (this.#partial !== undefined) {
      const p = this.#partial;
      const take = Math.min(size - p.filled, pcm.length);
      p.pcm.set(pcm.subarray(0, take), p.filled);
      p.filled += take;
      at = take;
      if (p.filled === size) {
        this.#frames.push({ itemId, pcm: p.pcm, last: false });
        this.#partial = undefined;
      }
    }
    for (; at + size <= pcm.length; at += size) {
      this.#frames.push({ itemId, pcm: pcm.slice(at, at + size), last: false });
    }
    if (at < pcm.length) {
      const frame = new Int16Array(size);
      frame.set(pcm.subarray(at));
      this.#partial = { itemId, pcm: frame, filled: pcm.length - at, since: this.#clock.now() };
    }
    this.#wake();
  }

  /** No more audio comes for `itemId`: its partial frame goes out padded, and `onItemSent` follows its last frame. */
  finish(itemId: string): void {
    if (this.#closed) return;
    if (this.#partial?.itemId === itemId) {
      this.#padPartial(true);
    } else {
      const last = this.#frames.findLast((f) => f.itemId === itemId);
      if (last === undefined) {
        // All of it has gone out already.
        this.#options.onItemSent?.(itemId);
        return;
      }
      last.last = true;
    }
    this.#wake();
  }

  /** Drops every frame not yet sent (a barge-in). Returns the items whose audio was cut short. */
  flush(): string[] {
    const items = new Set(this.#frames.map((f) => f.itemId));
    if (this.#partial !== undefined) items.add(this.#partial.itemId);
    this.#stats.framesFlushed += this.#frames.length + (this.#partial === undefined ? 0 : 1);
    this.#frames.length = 0;
    this.#partial = undefined;
    this.#goIdle();
    return [...items];
  }

  close(): void {
    this.#closed = true;
    this.flush();
  }

  #padPartial(last: boolean): void {
    const p = this.#partial;
    if (p === undefined) return;
    this.#frames.push({ itemId: p.itemId, pcm: p.pcm, last });
    this.#partial = undefined;
  }

  #wake(): void {
    if (this.#closed || (this.#frames.length === 0 && this.#partial === undefined)) return;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    if (this.#nextAt === undefined) this.#startTalkspurt();
    this.#tick();
  }

  #startTalkspurt(): void {
    const now = this.#clock.now();
    if (this.#lastEndAt !== undefined && now > this.#lastEndAt) {
      // The silence since the last talkspurt advances the RTP clock too, in whole frames.
      const silentFrames = Math.floor((now - this.#lastEndAt) / OPUS_FRAME_MS);
      this.#timestamp = (this.#timestamp + silentFrames * FRAME_TICKS) >>> 0;
    }
    this.#nextAt = now;
    this.#markerDue = true;
  }

  #tick(): void {
    this.#timer = undefined;
    if (this.#closed || this.#nextAt === undefined) return;
    const now = this.#clock.now();
    if (now - this.#nextAt > MAX_LAG_MS) {
      // The loop stalled: send from now on rather than burst the backlog at the receiver.
      this.#nextAt = now;
      this.#stats.rebases += 1;
    }
    if (this.#frames.length === 0 && this.#partial !== undefined && now - this.#partial.since >= this.#partialWaitMs) {
      this.#padPartial(false);
    }
    while (this.#frames.length > 0 && this.#nextAt <= now + this.#leadMs) {
      this.#sendFrame(this.#frames.shift()!);
      this.#nextAt += OPUS_FRAME_MS;
    }
    if (this.#frames.length > 0) {
      this.#schedule(this.#nextAt - this.#leadMs - now);
    } else if (this.#partial !== undefined) {
      this.#schedule(this.#partial.since + this.#partialWaitMs - now);
    } else {
      this.#goIdle();
    }
  }

  #sendFrame(frame: Frame): void {
    const payload = this.#codec.encode(frame.pcm);
    this.#options.send({
      sequenceNumber: this.#sequence,
      timestamp: this.#timestamp,
      marker: this.#markerDue,
      payload,
    });
    this.#markerDue = false;
    this.#sequence = (this.#sequence + 1) & 0xffff;
    this.#timestamp = (this.#timestamp + FRAME_TICKS) >>> 0;
    this.#stats.packetsSent += 1;
    this.#lastEndAt = (this.#nextAt ?? this.#clock.now()) + OPUS_FRAME_MS;
    this.#options.onFrameSent?.(frame.itemId, OPUS_FRAME_MS);
    if (frame.last) this.#options.onItemSent?.(frame.itemId);
  }

  #schedule(delayMs: number): void {
    this.#timer = this.#clock.setTimeout(() => this.#tick(), Math.max(1, Math.ceil(delayMs)));
  }

  #goIdle(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#nextAt = undefined;
  }
}

function randomUint(max: number): number {
  return Math.floor(Math.random() * max);
}
