import { type Clock, systemClock } from '../realtime/clock.ts';
import { G711_FRAME_BYTES, G711_FRAME_MS, type G711Law, silenceByte } from './g711-law.ts';

/** A position in an utterance's audio that the far end reaches once the frames before it have played. */
export interface PlayoutMark {
  utteranceId: string;
  /** Audio of the utterance played once this mark is reached, in ms (a chunk's `startMs + durationMs` at its end). */
  playedMs: number;
}

export interface PacedG711SenderOptions {
  law: G711Law;
  /** One 20 ms frame (160 bytes) is due now. `first`: the first frame of a talkspurt. */
  sendFrame(frame: Uint8Array, utteranceId: string, first: boolean): void;
  /** Every frame queued before `mark` has been sent. */
  markReached(mark: PlayoutMark): void;
  clock?: Clock;
  /** How far ahead of real time frames may go out (default 40 ms): covers timer lateness without a queue at the far end. */
  leadMs?: number;
  /** Besides each chunk's end, a mark goes after every this many ms of audio (default 240). */
  markEveryMs?: number;
  /** A partial frame waits this long for more audio of its utterance before it is padded with silence and sent. */
  partialWaitMs?: number;
  /** Most frames held (default 6,000: 120 s of audio, 960 KB); audio beyond it is dropped and counted. */
  maxQueuedFrames?: number;
}

export interface PacedG711SenderStats {
  framesSent: number;
  /** Frames dropped by `flush` (the caller took the floor) before they were sent. */
  framesFlushed: number;
  /** Frames refused because the queue held `maxQueuedFrames` already. */
  framesDropped: number;
  /** Times the schedule fell more than 100 ms behind (a stalled event loop) and was rebased. */
  rebases: number;
}

type Entry = { frame: Uint8Array; utteranceId: string } | { mark: PlayoutMark };

interface Partial {
  utteranceId: string;
  frame: Uint8Array;
  filled: number;
  since: number;
  /** Marks that fall after this frame: queued once it is complete. */
  marks: PlayoutMark[];
}

const MAX_LAG_MS = 100;

/**
 * The assistant's voice as a telephone leg carries it: G.711 bytes at 8 kHz cut into 20 ms frames
 * and handed to the transport at the pace they play, with marks between them that say how far into
 * an utterance the far end is once the frames before have played. A chunk's trailing partial frame
 * waits for the next chunk of its utterance (padded with silence when the utterance ends, another
 * begins, or nothing comes for `partialWaitMs`), so speech has no gaps at chunk boundaries; the
 * chunk's end mark follows that frame. `flush` drops everything not yet sent, marks included: the
 * caller took the floor, and none of it will be heard.
 *
 * Written here rather than shared with the WebRTC Opus sender: frames are already encoded when
 * queued (companding costs nothing, unlike Opus), no RTP numbering is kept (each transport stamps
 * its own), and marks travel in the same queue as the frames.
 *
 * @example
 *   const sender = new PacedG711Sender({ law: 'pcmu', sendFrame: (f) => rtp.send(f), markReached: (m) => ack(m) });
 *   sender.enqueue('utt_1', mulaw8k, 0, 1000);
 *   sender.finish('utt_1');
 *   sender.flush(); // the caller barged in
 */
export class PacedG711Sender {
  readonly #options: PacedG711SenderOptions;
  readonly #clock: Clock;
  readonly #leadMs: number;
  readonly #markEveryFrames: number;
  readonly #partialWaitMs: number;
  readonly #maxFrames: number;
  readonly #silence: number;
  readonly #queue: Entry[] = [];
  #queuedFrames = 0;
  #framesSinceMark = 0;
  #partial: Partial | undefined;
  /** Clock time at which the next frame is due; undefined while idle (between talkspurts). */
  #nextAt: number | undefined;
  #firstDue = false;
  #timer: unknown;
  #closed = false;
  readonly #stats: PacedG711SenderStats = { framesSent: 0, framesFlushed: 0, framesDropped: 0, rebases: 0 };

  constructor(options: PacedG711SenderOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#leadMs = options.leadMs ?? 40;
    this.#markEveryFrames = Math.max(1, Math.round((options.markEveryMs ?? 240) / G711_FRAME_MS));
    this.#partialWaitMs = options.partialWaitMs ?? 60;
    this.#maxFrames = options.maxQueuedFrames ?? 6000;
    this.#silence = silenceByte(options.law);
  }

  get stats(): Readonly<PacedG711SenderStats> {
    return this.#stats;
  }

  /** Milliseconds of audio waiting to be sent. */
  get queuedMs(): number {
    return (this.#queuedFrames + (this.#partial === undefined ? 0 : 1)) * G711_FRAME_MS;
  }

  /**
   * One chunk of an utterance, already companded at 8 kHz; `startMs`/`durationMs` place it in the
   * utterance (as its `assistant.audio` event does), for the marks.
   */
  enqueue(utteranceId: string, bytes: Uint8Array, startMs: number, durationMs: number): void {
    if (this.#closed) return;
    if (this.#partial !== undefined && this.#partial.utteranceId !== utteranceId) this.#padPartial();
    let offset = 0;
    while (offset < bytes.length) {
      if (this.#queuedFrames >= this.#maxFrames) {
        this.#stats.framesDropped += Math.ceil((bytes.length - offset) / G711_FRAME_BYTES);
        break;
      }
      const partial = this.#partial;
      if (partial !== undefined) {
        const take = Math.min(G711_FRAME_BYTES - partial.filled, bytes.length - offset);
        partial.frame.set(bytes.subarray(offset, offset + take), partial.filled);
        partial.filled += take;
        offset += take;
        if (partial.filled < G711_FRAME_BYTES) break;
        this.#completePartial();
      } else if (bytes.length - offset >= G711_FRAME_BYTES) {
        this.#pushFrame(bytes.slice(offset, offset + G711_FRAME_BYTES), utteranceId);
        offset += G711_FRAME_BYTES;
      } else {
        const frame = new Uint8Array(G711_FRAME_BYTES).fill(this.#silence);
        frame.set(bytes.subarray(offset));
        this.#partial = { utteranceId, frame, filled: bytes.length - offset, since: this.#clock.now(), marks: [] };
        offset = bytes.length;
        break;
      }
      if (offset < bytes.length && this.#framesSinceMark >= this.#markEveryFrames) {
        this.#pushMark({ utteranceId, playedMs: startMs + offset / (G711_FRAME_BYTES / G711_FRAME_MS) });
      }
    }
    const end: PlayoutMark = { utteranceId, playedMs: startMs + durationMs };
    if (this.#partial?.utteranceId === utteranceId) this.#partial.marks.push(end);
    else this.#pushMark(end);
    this.#wake();
  }

  /** No more audio comes for `utteranceId`: its partial frame goes out padded, its marks after it. */
  finish(utteranceId: string): void {
    if (this.#closed || this.#partial?.utteranceId !== utteranceId) return;
    this.#padPartial();
    this.#wake();
  }

  /** Drops every frame and mark not yet sent. Returns the utterances whose audio was cut short. */
  flush(): string[] {
    const cut = new Set<string>();
    for (const entry of this.#queue) if ('frame' in entry) cut.add(entry.utteranceId);
    if (this.#partial !== undefined) cut.add(this.#partial.utteranceId);
    this.#stats.framesFlushed += this.#queuedFrames + (this.#partial === undefined ? 0 : 1);
    this.#queue.length = 0;
    this.#queuedFrames = 0;
    this.#partial = undefined;
    this.#goIdle();
    return [...cut];
  }

  close(): void {
    this.flush();
    this.#closed = true;
  }

  #pushFrame(frame: Uint8Array, utteranceId: string): void {
    this.#queue.push({ frame, utteranceId });
    this.#queuedFrames += 1;
    this.#framesSinceMark += 1;
  }

  #pushMark(mark: PlayoutMark): void {
    this.#queue.push({ mark });
    this.#framesSinceMark = 0;
  }

  #completePartial(): void {
    const partial = this.#partial;
    if (partial === undefined) return;
    this.#partial = undefined;
    this.#pushFrame(partial.frame, partial.utteranceId);
    for (const mark of partial.marks) this.#pushMark(mark);
  }

  #padPartial(): void {
    // The frame was filled with silence when it was made: only the marks and the queue are left to do.
    this.#completePartial();
  }

  #wake(): void {
    if (this.#closed || (this.#queue.length === 0 && this.#partial === undefined)) return;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#nextAt === undefined) {
      this.#nextAt = this.#clock.now();
      this.#firstDue = true;
    }
    this.#tick();
  }

  #tick(): void {
    this.#timer = undefined;
    if (this.#closed || this.#nextAt === undefined) return;
    const now = this.#clock.now();
    if (now - this.#nextAt > MAX_LAG_MS) {
      // The loop stalled: send from now on rather than burst the backlog at the far end.
      this.#nextAt = now;
      this.#stats.rebases += 1;
    }
    if (this.#queuedFrames === 0 && this.#partial !== undefined && now - this.#partial.since >= this.#partialWaitMs) {
      this.#padPartial();
    }
    while (this.#queue.length > 0) {
      const head = this.#queue[0]!;
      if ('mark' in head) {
        this.#queue.shift();
        this.#options.markReached(head.mark);
        continue;
      }
      if (this.#nextAt > now + this.#leadMs) break;
      this.#queue.shift();
      this.#queuedFrames -= 1;
      this.#stats.framesSent += 1;
      const first = this.#firstDue;
      this.#firstDue = false;
      this.#nextAt += G711_FRAME_MS;
      this.#options.sendFrame(head.frame, head.utteranceId, first);
      if (this.#closed || this.#nextAt === undefined) return; // the transport flushed or closed us
    }
    if (this.#queue.length > 0) {
      this.#schedule(this.#nextAt - this.#leadMs - now);
    } else if (this.#partial !== undefined) {
      this.#schedule(this.#partial.since + this.#partialWaitMs - now);
    } else if (this.#nextAt < now) {
      this.#goIdle();
    } else {
      // The last frame is still playing: a chunk arriving before it ends continues the talkspurt.
      this.#schedule(this.#nextAt - now);
    }
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
