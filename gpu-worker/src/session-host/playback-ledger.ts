/**
 * Played-audio accounting: what of each assistant utterance the user actually heard.
 *
 * The model emits text ahead of audio; clients acknowledge playback (or the edge estimates it in real
 * time for clients that cannot). On an interruption the transcript and the model's context keep only
 * the heard part: the heard text is the utterance's text cut in proportion to the heard audio, at a
 * word boundary (an approximation: the reference voice speaks at an even rate).
 */
export interface UtteranceRecord {
  id: string;
  text: string;
  emittedMs: number;
  /** Latest acknowledged playout, or null before any acknowledgement. */
  ackedMs: number | null;
  /** Session time at which the first audio was emitted. */
  firstAudioAtMs: number | null;
  finished: boolean;
  reason: 'completed' | 'discarded' | 'repaired' | 'parked' | null;
  /** Work ids of delegate spans in this utterance. */
  workIds: string[];
  /** Prefill attempt this utterance speaks, if any. */
  speaksAttemptId: string | null;
}

/** Rough speaking rate of the reference voice, used before an utterance's full length is known. */
const MS_PER_CHAR = 62;

export class PlaybackLedger {
  private readonly utterances = new Map<string, UtteranceRecord>();
  private readonly order: string[] = [];
  /** Session time until which emitted assistant audio is still playing, assuming real-time playout. */
  private audibleUntilMs = 0;

  start(id: string): UtteranceRecord {
    const record: UtteranceRecord = {
      id,
      text: '',
      emittedMs: 0,
      ackedMs: null,
      firstAudioAtMs: null,
      finished: false,
      reason: null,
      workIds: [],
      speaksAttemptId: null,
    };
    this.utterances.set(id, record);
    this.order.push(id);
    if (this.order.length > 256) {
      const old = this.order.shift();
      if (old !== undefined) this.utterances.delete(old);
    }
    return record;
  }

  get(id: string): UtteranceRecord | undefined {
    return this.utterances.get(id);
  }

  addText(id: string, text: string): void {
    const u = this.utterances.get(id);
    if (u) u.text += text;
  }

  addAudio(id: string, durationMs: number, nowMs: number): void {
    const u = this.utterances.get(id);
    if (!u) return;
    u.firstAudioAtMs ??= nowMs;
    u.emittedMs += durationMs;
    this.audibleUntilMs = Math.max(this.audibleUntilMs, nowMs) + durationMs;
  }

  ack(id: string, playedMs: number): UtteranceRecord | undefined {
    const u = this.utterances.get(id);
    if (!u) return undefined;
    u.ackedMs = Math.min(Math.max(u.ackedMs ?? 0, playedMs), u.emittedMs);
    return u;
  }

  /** A truncate is authoritative even when it moves playout back. */
  truncate(id: string, playedMs: number): UtteranceRecord | undefined {
    const u = this.utterances.get(id);
    if (!u) return undefined;
    u.ackedMs = Math.min(playedMs, u.emittedMs);
    return u;
  }

  /** Whether assistant audio is still playing at `nowMs` (real-time estimate). */
  isAudible(nowMs: number): boolean {
    return nowMs < this.audibleUntilMs;
  }

  /** The client dropped its buffered audio (barge-in): nothing is audible any more. */
  clearAudible(nowMs: number): void {
    this.audibleUntilMs = Math.min(this.audibleUntilMs, nowMs);
  }

  /** Heard milliseconds: acknowledged playout if any, else the real-time estimate since first audio. */
  heardMs(id: string, nowMs: number): number {
    const u = this.utterances.get(id);
    if (!u) return 0;
    if (u.ackedMs !== null) return u.ackedMs;
    if (u.firstAudioAtMs === null) return 0;
    return Math.min(u.emittedMs, Math.max(0, nowMs - u.firstAudioAtMs));
  }

  /** Fully played: finished and acknowledged to the end of its audio. */
  isFullyPlayed(id: string): boolean {
    const u = this.utterances.get(id);
    return !!u && u.finished && u.ackedMs !== null && u.ackedMs >= u.emittedMs - 1;
  }

  heardText(id: string, heardMs: number): string {
    const u = this.utterances.get(id);
    if (!u || heardMs <= 0) return '';
    const totalMs = u.finished ? u.emittedMs : Math.max(u.emittedMs, u.text.length * MS_PER_CHAR);
    if (totalMs <= 0 || heardMs >= totalMs) return u.text.trim();
    return cutAtWord(u.text, Math.floor((u.text.length * heardMs) / totalMs));
  }
}

function cutAtWord(text: string, at: number): string {
  if (at >= text.length) return text.trim();
  const head = text.slice(0, at);
  const lastSpace = head.lastIndexOf(' ');
  return (lastSpace > 0 ? head.slice(0, lastSpace) : '').trim();
}
