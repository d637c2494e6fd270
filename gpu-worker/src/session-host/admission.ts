import { type BackendResult, DELEGATION_LIMITS } from '@venus/protocol';

/**
 * When landed `<backend>` results may enter the model's input, and in which order. Pure: the
 * runtime passes the conversational state at a chunk boundary and carries out the plan.
 *
 * Causality: a result that landed during chunk t is only eligible at the boundary of a later chunk
 * (`chunk > landedChunk`), never at its own, so no step sees a result retroactively.
 *
 * Scheduling follows the official harness's result manager: results to be spoken at a pause wait
 * for a gap in which neither side speaks, of max(250, 800 − 0.05 × oldest wait) ms; among those
 * that are due, corrections and questions needing the user go first, ordinary progress last, an item
 * waiting over 8 s jumps the queue, and ties go to the least slack (time to expiry minus its
 * estimated speech). One spoken admission per boundary; `interrupt` results cut in at once.
 */
export interface PendingResult {
  result: BackendResult;
  /** Seq and chunk of its `work.result` event on the timeline. */
  resultSeq: number;
  landedChunk: number;
  landedAtMs: number;
  /** Whether the user was mid-turn at the first boundary after landing (for skip_if_busy). */
  busyAtFirstBoundary: boolean | null;
}

export interface BoundaryState {
  chunk: number;
  /** Session clock (as `landedAtMs` and `lastActivityAtMs`). */
  nowMs: number;
  /** Wall clock, for the result's TTL (`expiresAtMs`). */
  wallNowMs: number;
  incarnation: number;
  userSpeaking: boolean;
  /** An utterance is being emitted or its audio is still playing. */
  assistantBusy: boolean;
  /** Session time of the last speech of either side, or of typed user input. */
  lastActivityAtMs: number;
}

export type AdmissionVerdict =
  | { kind: 'wait' }
  | { kind: 'admit'; mode: 'speak' | 'silent'; cutIn: boolean }
  | { kind: 'expire'; reason: string };

export interface BoundaryPlan {
  /** In the order they enter the model: silent ones, then at most one spoken. */
  admit: { pending: PendingResult; mode: 'speak' | 'silent'; cutIn: boolean }[];
  expire: { pending: PendingResult; reason: string }[];
  keep: PendingResult[];
}

/** A result waiting longer than this goes before any other that is due. */
export const STARVATION_MS = 8000;
/** Speaking rate the official scheduler assumes for a result's spoken length (its laxity estimate). */
const ESTIMATED_SPEECH_CHARS_PER_S = 4;
const URGENT = new Set(['correction', 'need_input', 'approval', 'important']);

/** Silence `when_idle` waits for: 800 ms, easing by 5% of the oldest wait, never under 250 ms. */
export function requiredSilenceMs(oldestWaitMs: number): number {
  const { deliverySilenceMs, deliverySilenceMinMs } = DELEGATION_LIMITS;
  return Math.max(deliverySilenceMinMs, deliverySilenceMs - 0.05 * Math.max(0, oldestWaitMs));
}

/** The verdict for one result on its own (before ordering among the others). */
export function decideAdmission(p: PendingResult, s: BoundaryState, oldestWaitMs = s.nowMs - p.landedAtMs) {
  if (s.chunk <= p.landedChunk) return { kind: 'wait' } as const;
  const { result } = p;
  if (result.incarnation !== s.incarnation) return { kind: 'expire', reason: 'stale_incarnation' } as const;
  if (s.wallNowMs > result.expiresAtMs) return { kind: 'expire', reason: 'ttl' } as const;
  switch (result.policy) {
    case 'silent':
      return { kind: 'admit', mode: 'silent', cutIn: false } as const;
    case 'interrupt':
      return { kind: 'admit', mode: 'speak', cutIn: s.assistantBusy } as const;
    case 'skip_if_busy':
      if (p.busyAtFirstBoundary) return { kind: 'expire', reason: 'skipped_busy' } as const;
      return idleVerdict(s, oldestWaitMs);
    case 'when_idle':
      return idleVerdict(s, oldestWaitMs);
  }
}

function idleVerdict(s: BoundaryState, oldestWaitMs: number): AdmissionVerdict {
  if (s.userSpeaking || s.assistantBusy) return { kind: 'wait' };
  const silence = s.nowMs - s.lastActivityAtMs;
  return silence >= requiredSilenceMs(oldestWaitMs) ? { kind: 'admit', mode: 'speak', cutIn: false } : { kind: 'wait' };
}

/** Plans one boundary over all waiting results. Mutates only `busyAtFirstBoundary` (first sight). */
export function planBoundary(pending: readonly PendingResult[], s: BoundaryState): BoundaryPlan {
  const plan: BoundaryPlan = { admit: [], expire: [], keep: [] };
  let oldestWaitMs = 0;
  for (const p of pending) {
    if (p.busyAtFirstBoundary === null && s.chunk > p.landedChunk) p.busyAtFirstBoundary = s.userSpeaking;
    if (s.chunk > p.landedChunk) oldestWaitMs = Math.max(oldestWaitMs, s.nowMs - p.landedAtMs);
  }
  const spoken: { pending: PendingResult; cutIn: boolean }[] = [];
  for (const p of pending) {
    const v = decideAdmission(p, s, oldestWaitMs);
    if (v.kind === 'expire') plan.expire.push({ pending: p, reason: v.reason });
    else if (v.kind === 'wait') plan.keep.push(p);
    else if (v.mode === 'silent') plan.admit.push({ pending: p, mode: 'silent', cutIn: false });
    else spoken.push({ pending: p, cutIn: v.cutIn });
  }
  spoken.sort((a, b) => rank(a.pending, s) - rank(b.pending, s) || slack(a.pending, s) - slack(b.pending, s));
  const [first, ...rest] = spoken;
  if (first) plan.admit.push({ pending: first.pending, mode: 'speak', cutIn: first.cutIn });
  plan.keep.push(...rest.map((r) => r.pending));
  plan.keep.sort((a, b) => a.resultSeq - b.resultSeq);
  return plan;
}

/** Lower goes first: cut-ins, starving items, urgent ones, ordinary, then progress. */
function rank(p: PendingResult, s: BoundaryState): number {
  if (p.result.policy === 'interrupt') return 0;
  if (s.nowMs - p.landedAtMs > STARVATION_MS) return 1;
  const urgency = p.result.urgency;
  if (urgency && URGENT.has(urgency)) return 2;
  return urgency === 'progress' ? 4 : 3;
}

function slack(p: PendingResult, s: BoundaryState): number {
  const speechMs = (p.result.text.length / ESTIMATED_SPEECH_CHARS_PER_S) * 1000;
  return p.result.expiresAtMs - s.wallNowMs - speechMs;
}
