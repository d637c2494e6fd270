import type { FeatureRow } from './overlap-features.ts';
import { headDecision, nextStopStreak } from './overlap-head.ts';
import type { Interruption } from './overlap-policy.ts';
import type { Burst } from './voice-activity.ts';

/**
 * The first decision the head's scores make over a step's rows (decision points in burst order),
 * skipping bursts judged already (e.g. by the words of a client transcript). One verdict per step
 * at most: a burst decided here is judged, and the next step's rows are of a later burst or none.
 * A burst's run of stop-confident rows carries over from step to step.
 *
 * @example
 *   const v = firstHeadVerdict(rows, await head.score(rows.map((r) => r.features)));
 */
/** Each burst's run of stop-confident decision points so far (see HEAD_POLICY.stopRows). */
const stopStreaks = new WeakMap<Burst, number>();

export function firstHeadVerdict(
  rows: readonly FeatureRow[],
  scores: readonly Float32Array[],
): { burst: Burst; verdict: Interruption } | null {
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    const probs = scores[i];
    if (!probs || row.burst.judged) continue;
    const streak = nextStopStreak(stopStreaks.get(row.burst) ?? 0, probs);
    stopStreaks.set(row.burst, streak);
    const verdict = headDecision(probs, row.elapsedMs, row.ended, streak);
    if (verdict) return { burst: row.burst, verdict };
  }
  return null;
}
