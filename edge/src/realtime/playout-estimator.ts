import { type Clock, systemClock } from './clock.ts';

export interface PlayoutEstimatorOptions {
  /** Reports the estimated position in an utterance's audio (ms played so far). */
  onAck(utteranceId: string, playedMs: number): void;
  /** The utterance has finished and all its audio has (by estimate) played. */
  onPlayed(utteranceId: string): void;
  clock?: Clock;
  /** How often to report progress while audio is outstanding. */
  intervalMs?: number;
}

interface Playout {
  utteranceId: string;
  sentMs: number;
  playedMs: number;
  ackedMs: number;
  finished: boolean;
}

/**
 * Estimates what a client has played when it never says so (a plain OpenAI Realtime client sends
 * no playback acknowledgements). The client plays what it receives in order, in real time: an
 * utterance starts playing when its first audio is sent, or when the previous utterance's audio
 * runs out, and its position advances with the clock but never past the audio sent so far (a stall
 * when the stream underruns). Progress is reported every `intervalMs` while audio is outstanding,
 * and once more, exactly, when a finished utterance's audio has all played.
 *
 * @example
 *   const estimator = new PlayoutEstimator({ onAck: (id, ms) => ack(id, ms), onPlayed: (id) => stopped(id) });
 *   estimator.audioSent('utt_1', 200);
 *   estimator.finished('utt_1'); // 200 ms later: onAck('utt_1', 200), then onPlayed('utt_1')
 */
export class PlayoutEstimator {
  readonly #options: PlayoutEstimatorOptions;
  readonly #clock: Clock;
  readonly #intervalMs: number;
  readonly #queue: Playout[] = [];
  #lastAdvance: number | undefined;
  #timer: unknown;
  /** Clock time the pending timer fires at. */
  #timerDueMs = 0;
  /** Clock time of the last report (or of the start of playout): reports are at most one interval apart. */
  #lastReportMs: number | null = null;
  #stopped = false;

  constructor(options: PlayoutEstimatorOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#intervalMs = options.intervalMs ?? 250;
  }

  /** Audio of `durationMs` for this utterance has just been handed to the client. */
  audioSent(utteranceId: string, durationMs: number): void {
    if (this.#stopped || durationMs <= 0) return;
    this.#advance();
    let entry = this.#queue.find((p) => p.utteranceId === utteranceId);
    if (entry === undefined) {
      entry = { utteranceId, sentMs: 0, playedMs: 0, ackedMs: 0, finished: false };
      this.#queue.push(entry);
    }
    entry.sentMs += durationMs;
    this.#reschedule();
  }

  /** No more audio will come for this utterance. */
  finished(utteranceId: string): void {
    if (this.#stopped) return;
    const entry = this.#queue.find((p) => p.utteranceId === utteranceId);
    if (entry === undefined) return;
    this.#advance();
    entry.finished = true;
    this.#advance();
    this.#reschedule();
  }

  /** The client said where it cut this utterance off: stop estimating it, the next one plays from now. */
  truncate(utteranceId: string): void {
    this.#advance();
    const index = this.#queue.findIndex((p) => p.utteranceId === utteranceId);
    if (index >= 0) this.#queue.splice(index, 1);
    this.#reschedule();
  }

  /** The client dropped everything buffered: report where each utterance stopped, then forget them. */
  clear(): string[] {
    this.#advance();
    const dropped = this.#queue.splice(0, this.#queue.length);
    for (const entry of dropped) this.#ackIfMoved(entry);
    this.#reschedule();
    return dropped.map((p) => p.utteranceId);
  }

  /** Whether any utterance's audio is (by estimate) still playing or still streaming. */
  isPlaying(): boolean {
    return this.#queue.length > 0;
  }

  /** Estimated ms played of an utterance still tracked. */
  playedMs(utteranceId: string): number | undefined {
    this.#advance();
    return this.#queue.find((p) => p.utteranceId === utteranceId)?.playedMs;
  }

  stop(): void {
    this.#stopped = true;
    this.#queue.length = 0;
    this.#cancelTimer();
  }

  #advance(): void {
    const now = this.#clock.now();
    let elapsed = this.#lastAdvance === undefined ? 0 : now - this.#lastAdvance;
    this.#lastAdvance = now;
    // Time with nothing to play (idle, or an underrun) is not banked: playback resumes when audio arrives.
    while (this.#queue.length > 0) {
      const head = this.#queue[0]!;
      const step = Math.min(elapsed, head.sentMs - head.playedMs);
      head.playedMs += step;
      elapsed -= step;
      if (head.playedMs < head.sentMs || !head.finished) break;
      this.#queue.shift();
      head.playedMs = head.sentMs;
      this.#ackIfMoved(head);
      this.#options.onPlayed(head.utteranceId);
    }
  }

  #ackIfMoved(entry: Playout): void {
    const played = entry.playedMs >= entry.sentMs ? entry.sentMs : Math.floor(entry.playedMs);
    if (played <= entry.ackedMs) return;
    entry.ackedMs = played;
    this.#options.onAck(entry.utteranceId, played);
  }

  #reschedule(): void {
    const head = this.#queue[0];
    if (this.#stopped || head === undefined) {
      this.#cancelTimer();
      this.#lastReportMs = null;
      return;
    }
    const outstanding = head.sentMs - head.playedMs;
    if (outstanding <= 0) {
      this.#cancelTimer();
      return; // stalled: the next audioSent/finished reschedules
    }
    // Wake at the next periodic report, or at the exact end of the outstanding audio if sooner. The
    // report time is anchored to the last report, so audio arriving more often than the interval
    // cannot keep pushing the next acknowledgement out.
    const now = this.#clock.now();
    this.#lastReportMs ??= now;
    const due = Math.max(now + 1, Math.min(this.#lastReportMs + this.#intervalMs, now + Math.ceil(outstanding)));
    if (this.#timer !== undefined && this.#timerDueMs === due) return;
    this.#cancelTimer();
    this.#timerDueMs = due;
    const delay = due - now;
    this.#timer = this.#clock.setTimeout(() => this.#tick(), delay);
  }

  #tick(): void {
    this.#timer = undefined;
    this.#lastReportMs = this.#clock.now();
    this.#advance();
    const head = this.#queue[0];
    if (head !== undefined) this.#ackIfMoved(head);
    this.#reschedule();
  }

  #cancelTimer(): void {
    if (this.#timer === undefined) return;
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
