import { readFileSync } from 'node:fs';
import {
  HEAD_POLICY,
  type HeadPolicy,
  headDecision,
  nextStopStreak,
} from '../gpu-worker/src/perception/overlap-head.ts';
import type { Interruption } from '../gpu-worker/src/perception/overlap-policy.ts';

/** A CSV of `npm run train:data` (or a fold's predictions) as records by column name; no quoting (the files have none). */
export function readCsv(file: string): Record<string, string>[] {
  const [header, ...lines] = readFileSync(file, 'utf8').trim().split('\n');
  const names = header!.split(',');
  return lines.map((l) => Object.fromEntries(l.split(',').map((v, i) => [names[i]!, v])));
}

/** One decision point of a burst: the head's probabilities there, how far into the burst, whether it had ended. */
export interface ScoredRow {
  probs: ArrayLike<number>;
  elapsedMs: number;
  ended: boolean;
}

/**
 * The burst's verdict under `policy`, played decision point by decision point as the worker plays
 * it (`nextStopStreak`, then `headDecision`), and where it was made; null when no point decided.
 */
export function decideBurst(
  rows: readonly ScoredRow[],
  policy: HeadPolicy = HEAD_POLICY,
): { verdict: Interruption; elapsedMs: number } | null {
  let streak = 0;
  for (const row of rows) {
    streak = nextStopStreak(streak, row.probs, policy);
    const verdict = headDecision(row.probs, row.elapsedMs, row.ended, streak, policy);
    if (verdict) return { verdict, elapsedMs: row.elapsedMs };
  }
  return null;
}
