import {
  cancelLastTurnPlan,
  classifyInterruption,
  cutPlan,
  type InterruptionPlan,
  type InterruptionVerdict,
  notePlan,
} from './interruption.ts';
import type { SessionState } from './session-state.ts';
import type { StepOutput } from './step-output.ts';
import type { InterruptAction, UtteranceHandle } from './utterance-handle.ts';
import type { WorkDesk } from './work-desk.ts';

/** Utterance ids whose late output is filtered; older cut utterances are out of the ledger anyway. */
const MAX_DROPPED = 256;

/**
 * Who holds the floor: carries out the model's interruption verdicts (`interruption.ts` plans them)
 * and the client's cancels on the utterance being spoken. A cut ends the utterance at what was
 * heard, drops its late output, tells the model the heard text, and cancels the work it says.
 */
export class FloorControl {
  private planCounter = 0;

  constructor(
    private readonly s: SessionState,
    private readonly desk: WorkDesk,
    private readonly output: StepOutput,
  ) {}

  /**
   * The client stopped the response (response.cancel / output_audio_buffer.clear): `cancelsWork`,
   * since the turn it cancelled asked for that work; or a result cuts in: not, since the cut
   * utterance's own work is still wanted.
   */
  cancelResponse(chunk: number, cancelsWork = false): void {
    const u = this.s.active();
    if (!u) return;
    this.cut(u, { action: 'discard', cause: 'interruption', cancelsWork }, chunk);
    const { model } = this.s.model;
    if (model.cancelResponse) this.s.model.guard(model.cancelResponse());
  }

  onInterruption(v: InterruptionVerdict, chunk: number): void {
    const { s } = this;
    const u = s.active();
    switch (classifyInterruption(v, u !== null)) {
      case 'note':
        this.apply(notePlan(v, u?.id ?? null, u ? u.heardMs(s.nowMs()) : 0), chunk);
        return;
      case 'cancel_last_turn': {
        const last = s.book.lastCancellableUtterance();
        this.apply(cancelLastTurnPlan(v, last, s.book.cancellable(last)), chunk);
        return;
      }
      case 'cut':
        if (u) this.cut(u, v, chunk);
        return;
    }
  }

  private cut(u: UtteranceHandle, v: InterruptionVerdict, chunk: number): void {
    const { s } = this;
    const nowMs = s.nowMs();
    const openWork = s.book.cancellable(u.id);
    const outcome = u.interrupt(v.action as InterruptAction, nowMs);
    const planId = v.action === 'park' ? `plan_${++this.planCounter}` : null;
    const plan = cutPlan(v, u.id, outcome, openWork, planId);
    for (const d of plan.drafts) s.writer.append(d, chunk);
    if (plan.park) s.model.guard(s.model.model.park(plan.park));
    this.output.finish(u, 'discarded', chunk);
    s.dropped.add(u.id);
    if (s.dropped.size > MAX_DROPPED) s.dropped.delete(s.dropped.values().next().value as string);
    s.ledger.clearAudible(nowMs);
    const { heardMs, heardText } = outcome;
    s.model.guard(s.model.model.playbackAck({ utteranceId: u.id, playedMs: heardMs, final: true, heardText }));
    for (const c of plan.cancel) this.desk.cancel(c.workId, c.reason, false);
  }

  private apply(plan: InterruptionPlan, chunk: number): void {
    for (const d of plan.drafts) this.s.writer.append(d, chunk);
    for (const c of plan.cancel) this.desk.cancel(c.workId, c.reason, false);
  }
}
