import type { SampleRecord } from './sample-record.ts';
import { type SpeechSegment, segmentAt } from './speech-segments.ts';

/** Full-Duplex-Bench's turn-over test: the model took the turn if its speech spans ≥ 1 s or > 3 words. */
export const TURN_MIN_S = 1;
export const TURN_MIN_WORDS = 3;
/** Words per second when a run has no completed response to measure it on (eSpeak speaks ~2.6). */
const DEFAULT_WORDS_PER_S = 2.6;

const wordCount = (s: string) => s.split(/\s+/).filter(Boolean).length;

/**
 * The assistant's speaking rate in this run: words of the responses that played in full over the
 * seconds they played. Without an ASR pass over output.wav, the words in a stretch of model speech
 * are estimated as its duration times this rate.
 */
export function wordsPerSecond(record: SampleRecord): number {
  let words = 0;
  let seconds = 0;
  for (const r of record.responses) {
    if (r.status !== 'completed' || r.droppedS > 0 || r.playedS < 0.5) continue;
    words += wordCount(r.transcript);
    seconds += r.playedS;
  }
  return seconds > 0 ? words / seconds : DEFAULT_WORDS_PER_S;
}

export function isTurn(segment: SpeechSegment, wordsPerS: number): boolean {
  const duration = segment.end - segment.start;
  return duration >= TURN_MIN_S || duration * wordsPerS > TURN_MIN_WORDS;
}

/**
 * Stop latency: how long the model's speech went on after the user's overlap began at t0, i.e. the
 * end of the (merged) model speech segment that spans t0, minus t0. Null when no model speech spans t0.
 */
export function stopLatency(model: readonly SpeechSegment[], t0: number): number | null {
  const seg = segmentAt(model, t0) ?? model.find((s) => s.start <= t0 + 0.1 && s.end >= t0);
  return seg ? seg.end - t0 : null;
}

/** End of the user's speech that covers [t0, t1]: the last merged input segment starting before t1. */
export function userEnd(user: readonly SpeechSegment[], t0: number, t1: number): number {
  const covering = user.filter((s) => s.start <= t1 + 0.1 && s.end >= t0 - 0.1);
  return covering.length > 0 ? Math.max(...covering.map((s) => s.end)) : t1;
}

/** Response latency: from the end of the user's speech to the start of the next model speech after `from`. */
export function responseLatency(model: readonly SpeechSegment[], end: number, from: number): number | null {
  const next = model.find((s) => s.start >= from && s.end > end);
  return next ? next.start - end : null;
}

/** v1 turn-taking after the user's turn ended at `end`: whether and how fast the model took the turn. */
export function turnTaking(
  model: readonly SpeechSegment[],
  end: number,
  turnStart: number,
  wordsPerS: number,
  windowS = 5,
): { tookTurn: boolean; latencyS: number | null } {
  const next = model.find((s) => s.end > end && s.start >= turnStart && s.start <= end + windowS);
  if (!next) return { tookTurn: false, latencyS: null };
  return { tookTurn: isTurn(next, wordsPerS), latencyS: next.start - end };
}

/** v1 pause handling: the model took the turn if speech of turn length starts inside the pause [t0, t1]. */
export function tookTurnInPause(model: readonly SpeechSegment[], t0: number, t1: number, wordsPerS: number): boolean {
  return model.some((s) => s.start >= t0 && s.start < t1 && isTurn(s, wordsPerS));
}
