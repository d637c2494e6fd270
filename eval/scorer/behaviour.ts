import type { ResponseInfo, SampleRecord } from './sample-record.ts';

export type Behaviour = 'respond' | 'resume' | 'other';

export interface BehaviourVerdict {
  label: Behaviour;
  /** Which rule decided (see eval/README.md). */
  rule: string;
  /** The response playing when the overlap began, if any. */
  active: ResponseInfo | null;
  /** When the active response's audio stopped, if it was cut short. */
  cutAt: number | null;
  /** The first new response after the overlap, if any. */
  next: ResponseInfo | null;
}

/** How long after the overlap (or the cut) a new response still counts as the reaction to it. */
export const REACTION_WINDOW_S = 6;
/** Slack for "still playing when the overlap began / after it ended". */
const EDGE_S = 0.2;

/** The assistant carried on with its own business: a delegated result, or a parked plan resumed. */
function carriesOn(r: ResponseInfo): boolean {
  return r.speaksWork !== null || r.resumesPlan;
}

function wasCut(r: ResponseInfo, record: SampleRecord, t0: number): boolean {
  if (r.status === 'cancelled' || r.status === 'incomplete' || r.droppedS > 0.05) return true;
  return record.interruptions.some((i) => i.itemId === r.itemId && i.action !== 'continue' && i.at >= t0 - EDGE_S);
}

/**
 * Rule-based labelling of what the assistant did about an overlap [t0, t1], in the spirit of
 * Full-Duplex-Bench v1.5's categories, from what the client played and the server's events:
 *
 * 1. silent: nothing was playing at t0. A new response (not a delegated result) starting within
 *    the reaction window is `respond`; otherwise `other`.
 * 2. through: the response playing at t0 was not cut and played on past t1: `resume`.
 * 3. ended: it was not cut but ended by itself before t1 (+0.2 s): a new response within the
 *    window that is not a delegated result or resumed plan is `respond`; otherwise `resume`.
 * 4. cut: it was cut short (cancelled, flushed, or a venus interruption that discards, repairs or
 *    parks it). The first response that starts playing after the cut, within the window: a
 *    delegated result or a resumed plan is `resume` (it carried on with its own business);
 *    anything else is `respond`. No response: `other` (it stopped and stayed silent).
 */
export function classifyOverlap(record: SampleRecord, t0: number, t1: number): BehaviourVerdict {
  const played = record.responses.filter((r) => r.playStart !== null && r.playEnd !== null);
  const active =
    played
      .filter((r) => r.playStart! <= t0 + EDGE_S && r.playEnd! >= t0 - EDGE_S)
      .sort((a, b) => b.playStart! - a.playStart!)[0] ?? null;
  const after = (from: number, until: number) =>
    played.find((r) => r !== active && r.playStart! >= from - 0.05 && r.playStart! <= until) ?? null;

  if (!active) {
    const next = after(t0, t1 + REACTION_WINDOW_S);
    if (next && !carriesOn(next)) return { label: 'respond', rule: 'silent', active, cutAt: null, next };
    return { label: 'other', rule: 'silent', active, cutAt: null, next };
  }
  if (!wasCut(active, record, t0)) {
    if (active.playEnd! > t1 + EDGE_S) return { label: 'resume', rule: 'through', active, cutAt: null, next: null };
    const next = after(active.playEnd!, t1 + REACTION_WINDOW_S);
    if (next && !carriesOn(next)) return { label: 'respond', rule: 'ended', active, cutAt: null, next };
    return { label: 'resume', rule: 'ended', active, cutAt: null, next };
  }
  const cutAt = active.playEnd!;
  const next = after(cutAt, Math.max(t1, cutAt) + REACTION_WINDOW_S);
  if (!next) return { label: 'other', rule: 'cut', active, cutAt, next };
  return { label: carriesOn(next) ? 'resume' : 'respond', rule: 'cut', active, cutAt, next };
}
