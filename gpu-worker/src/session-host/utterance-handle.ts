import { type SpokenSegment, SpokenTextAccount } from '@venus/protocol';

export type UtteranceEnd = 'completed' | 'discarded' | 'repaired' | 'parked';
export type InterruptAction = 'discard' | 'repair' | 'park';

/** Rough speaking rate of the reference voice, used before an utterance's full length is known. */
const MS_PER_CHAR = 62;

/** What an interruption leaves of an utterance: what was heard, and the unspoken rest. */
export interface InterruptOutcome {
  action: InterruptAction;
  heardMs: number;
  heardText: string;
  /** Visible text the user did not hear (what a park keeps as the plan). */
  remainder: string;
}

/**
 * One thing the assistant says, as the session host tracks it: what was sent (text, audio), what was
 * heard (playback acknowledgements, or a real-time estimate before any), the work it delivers
 * (delegations it made, the prefilled result it speaks), and how it ended.
 *
 * Interruption is data: `interrupt(action, nowMs)` ends the utterance at what was heard and returns
 * that outcome; `done` resolves with the end reason, whoever ended it.
 *
 * @example
 *   const u = new UtteranceHandle('utt_1');
 *   u.addText('It is sunny in Paris.'); u.addAudio(1500, nowMs);
 *   u.ack(800);
 *   const { heardText } = u.interrupt('repair', nowMs); // "It is sunny"
 */
export class UtteranceHandle {
  /** Work ids of delegate spans in this utterance. */
  readonly workIds: string[] = [];
  /** Prefill attempt this utterance speaks, if any. */
  speaksAttemptId: string | null = null;
  private readonly spoken = new SpokenTextAccount();
  private acked: number | null = null;
  private firstAudioAtMs: number | null = null;
  private end: UtteranceEnd | null = null;
  private resolveDone: (reason: UtteranceEnd) => void = () => {};
  /** Resolves with the end reason once the utterance ended, however it ended. */
  readonly done: Promise<UtteranceEnd> = new Promise((resolve) => {
    this.resolveDone = resolve;
  });

  constructor(readonly id: string) {}

  get text(): string {
    return this.spoken.text;
  }

  get emittedMs(): number {
    return this.spoken.emittedMs;
  }

  /** Latest acknowledged playout, or null before any acknowledgement. */
  get ackedMs(): number | null {
    return this.acked;
  }

  get finished(): boolean {
    return this.end !== null;
  }

  get reason(): UtteranceEnd | null {
    return this.end;
  }

  addText(visible: string): void {
    this.spoken.addText(visible);
  }

  addAudio(durationMs: number, nowMs: number): void {
    this.firstAudioAtMs ??= nowMs;
    this.spoken.addAudio(durationMs);
  }

  addSegments(segments: readonly SpokenSegment[]): void {
    this.spoken.addSegments(segments);
  }

  /** A client acknowledgement: playout only moves forward, and never past what was sent. */
  ack(playedMs: number): void {
    this.acked = Math.min(Math.max(this.acked ?? 0, playedMs), this.emittedMs);
  }

  /** A truncate is authoritative even when it moves playout back. */
  truncate(playedMs: number): void {
    this.acked = Math.min(Math.max(0, playedMs), this.emittedMs);
  }

  /** Heard ms: acknowledged playout if any, else the real-time estimate since the first audio. */
  heardMs(nowMs: number): number {
    if (this.acked !== null) return this.acked;
    if (this.firstAudioAtMs === null) return 0;
    return Math.min(this.emittedMs, Math.max(0, nowMs - this.firstAudioAtMs));
  }

  heardText(heardMs: number): string {
    return this.spoken.heardText(heardMs, this.finished, MS_PER_CHAR);
  }

  /** Finished and acknowledged to the end of its audio. */
  get fullyPlayed(): boolean {
    return this.finished && this.acked !== null && this.acked >= this.emittedMs - 1;
  }

  /** Ends the utterance (idempotent); returns whether this call ended it. */
  finish(reason: UtteranceEnd): boolean {
    if (this.end !== null) return false;
    this.end = reason;
    this.resolveDone(reason);
    return true;
  }

  /** Cuts the utterance at what the user heard by `nowMs` and ends it with the action's reason. */
  interrupt(action: InterruptAction, nowMs: number): InterruptOutcome {
    const heardMs = this.heardMs(nowMs);
    const heard = this.heardText(heardMs);
    const remainder = this.text.trim().slice(heard.length).trim();
    this.truncate(heardMs);
    this.finish(action === 'park' ? 'parked' : action === 'repair' ? 'repaired' : 'discarded');
    return { action, heardMs, heardText: heard, remainder };
  }
}
