import type { InterruptionAction, OutputStep, OverlapCause, TimelineDraft } from '@venus/protocol';
import type { InterruptOutcome } from './utterance-handle.ts';

export type InterruptionVerdict = NonNullable<OutputStep['interruption']>;

/** What the runtime must do about one interruption verdict. */
export interface InterruptionPlan {
  drafts: TimelineDraft[];
  cancel: { workId: string; reason: string }[];
  park: { planId: string; utteranceId: string; remainder: string } | null;
}

/**
 * How a verdict applies, given whether an utterance is being spoken:
 * - `note`: speech the assistant talks through (continue), or nothing to interrupt — recorded only;
 * - `cut`: the active utterance ends at what was heard (discard, repair or park);
 * - `cancel_last_turn`: a cancel after the reply already ended (a spoken "never mind" whose
 *   transcript lands after the assistant stopped): the most recent turn's open work is cancelled.
 */
export function classifyInterruption(v: InterruptionVerdict, speaking: boolean): 'note' | 'cut' | 'cancel_last_turn' {
  if (v.action === 'continue') return 'note';
  if (speaking) return 'cut';
  return v.cancelsWork ? 'cancel_last_turn' : 'note';
}

function interruptionDraft(
  action: InterruptionAction,
  cause: OverlapCause,
  utteranceId: string | null,
  heardMs: number,
  heardText: string,
  cancelledWork: string[],
  planId?: string,
): TimelineDraft {
  return {
    stream: 'assistant',
    type: 'assistant.interruption',
    data: { action, cause, utteranceId, heardMs, heardText, cancelledWork, ...(planId ? { planId } : {}) },
  };
}

/** Speech recorded without cutting anything: heard so far, nothing cancelled. */
export function notePlan(v: InterruptionVerdict, utteranceId: string | null, heardMs: number): InterruptionPlan {
  return { drafts: [interruptionDraft(v.action, v.cause, utteranceId, heardMs, '', [])], cancel: [], park: null };
}

/** The last turn's cancellable work is cancelled; nothing was being said. */
export function cancelLastTurnPlan(
  v: InterruptionVerdict,
  utteranceId: string | null,
  open: string[],
): InterruptionPlan {
  return {
    drafts: [interruptionDraft(v.action, v.cause, utteranceId, 0, '', open)],
    cancel: open.map((workId) => ({ workId, reason: 'user_cancelled' })),
    park: null,
  };
}

/**
 * The active utterance was cut (`outcome` from `UtteranceHandle.interrupt`). Its open work is
 * cancelled when the verdict says so; a park keeps the unspoken remainder as the plan `planId`.
 */
export function cutPlan(
  v: InterruptionVerdict,
  utteranceId: string,
  outcome: InterruptOutcome,
  openWork: string[],
  planId: string | null,
): InterruptionPlan {
  const cancelled = v.cancelsWork ? openWork : [];
  const parkedId = v.action === 'park' ? planId : null;
  const drafts = [
    interruptionDraft(
      v.action,
      v.cause,
      utteranceId,
      outcome.heardMs,
      outcome.heardText,
      cancelled,
      parkedId ?? undefined,
    ),
  ];
  const park = parkedId ? { planId: parkedId, utteranceId, remainder: outcome.remainder } : null;
  if (park) drafts.push({ stream: 'assistant', type: 'assistant.parked', data: park });
  return { drafts, cancel: cancelled.map((workId) => ({ workId, reason: `interrupted:${v.action}` })), park };
}
