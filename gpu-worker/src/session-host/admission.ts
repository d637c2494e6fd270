import { type BackendResult, DELEGATION_LIMITS } from '@venus/protocol';

/**
 * When a landed `<backend>` result may enter the model's input. Pure: the session runtime passes the
 * conversational state at a chunk boundary and acts on the verdict.
 *
 * Causality: a result that landed during chunk t is only eligible at the boundary of a later chunk
 * (`boundaryChunk > landedChunk`), never at its own, so no step sees a result retroactively.
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
  | { kind: 'admit'; mode: 'speak' | 'silent' }
  | { kind: 'expire'; reason: string };

/** Silence that `when_idle` waits for: 800 ms at first, easing to 250 ms for results that waited 5 s. */
export function requiredSilenceMs(waitedMs: number): number {
  const { deliverySilenceMs, deliverySilenceMinMs } = DELEGATION_LIMITS;
  if (waitedMs >= 5000) return deliverySilenceMinMs;
  return deliverySilenceMs - ((deliverySilenceMs - deliverySilenceMinMs) * waitedMs) / 5000;
}

export function decideAdmission(pending: PendingResult, state: BoundaryState): AdmissionVerdict {
  if (state.chunk <= pending.landedChunk) return { kind: 'wait' };
  const { result } = pending;
  if (result.incarnation !== state.incarnation) return { kind: 'expire', reason: 'stale_incarnation' };
  if (state.wallNowMs > result.expiresAtMs) return { kind: 'expire', reason: 'ttl' };
  switch (result.policy) {
    case 'silent':
      return { kind: 'admit', mode: 'silent' };
    case 'interrupt':
      return { kind: 'admit', mode: 'speak' };
    case 'skip_if_busy':
      if (pending.busyAtFirstBoundary) return { kind: 'expire', reason: 'skipped_busy' };
      return idleVerdict(pending, state);
    case 'when_idle':
      return idleVerdict(pending, state);
  }
}

function idleVerdict(pending: PendingResult, state: BoundaryState): AdmissionVerdict {
  if (state.userSpeaking || state.assistantBusy) return { kind: 'wait' };
  const silence = state.nowMs - state.lastActivityAtMs;
  const waited = state.nowMs - pending.landedAtMs;
  return silence >= requiredSilenceMs(waited) ? { kind: 'admit', mode: 'speak' } : { kind: 'wait' };
}
