import type { FeatureRow } from './overlap-features.ts';
import { headDecision } from './overlap-head.ts';
import type { Interruption } from './overlap-policy.ts';
import type { Burst } from './voice-activity.ts';

/**
 * The first decision the head's scores make over a step's rows (decision points in burst order),
 * skipping bursts judged already (e.g. by the words of a client transcript). One verdict per step
 * at most: a burst decided here is judged, and the next step's rows are of a later burst or none.
 *
 * @example
 *   const v = firstHeadVerdict(rows, await head.score(rows.map((r) => r.features)));
 */
export function firstHeadVerdict(
  rows: readonly FeatureRow[],
  scores: readonly Float32Array[],
): { burst: Burst; verdict: Interruption } | null {
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    const probs = scores[i];
    if (!probs || row.burst.judged) continue;
    const verdict = headDecision(probs, row.elapsedMs, row.ended);
    if (verdict) return { burst: row.burst, verdict };
  }
  return null;
}
