import {
  type BackendResult,
  BackendResultSchema,
  CLIENT_DELEGATION,
  CLIENT_FUNCTION_LIMITS,
  type ClientCall,
  clientCallId,
  DELEGATION_LIMITS,
  type DelegationExecutor,
  spokenClientOutput,
  stripReservedTags,
  toVenusError,
  type WorkEvent,
  type WorkState,
} from '@venus/protocol';
import type { SessionState } from './session-state.ts';
import type { OpenWork } from './timeline-replay.ts';
import type { UtteranceHandle } from './utterance-handle.ts';
import type { WorkRecord } from './work-ledger.ts';

/**
 * The session's side of background work: hands delegations to the executor with their evidence
 * cutoff and a snapshot of the other works, records work states (the lifecycle refuses backward
 * moves), lands results, admits them at boundaries as the scheduler plans, and cancels.
 */
export class WorkDesk {
  constructor(
    private readonly s: SessionState,
    private readonly executor: DelegationExecutor,
    /** Cuts the active utterance so an `interrupt` result is spoken now. */
    private readonly cutIn: (chunk: number) => void,
  ) {}

  /** A completed delegate span in utterance `u`. */
  delegate(u: UtteranceHandle, query: string, chunk: number): void {
    const { s } = this;
    const refusal = s.book.refuse(query);
    if (refusal) {
      s.writer.error(refusal.code, refusal.message);
      return;
    }
    const incarnation = s.model.incarnation;
    const work = s.book.open(u.id, query, incarnation, s.nowMs());
    const { workId } = work;
    const evidenceCutoffSeq = s.evidenceCutoffSeq;
    s.writer.append(
      { stream: 'assistant', type: 'assistant.delegate', data: { workId, query, evidenceCutoffSeq, private: true } },
      chunk,
    );
    u.workIds.push(workId);
    s.writer.append({ stream: 'background', type: 'work.state', data: { workId, state: 'QUEUED' } }, chunk);
    const policy = s.config.deliveryPolicy;
    if (s.config.delegation === 'client') {
      // Client delegation (GPT-Live's): no harness; the client gets the request as it was put.
      this.setState(workId, 'RUNNING', undefined, chunk, CLIENT_DELEGATION);
      const call = { name: CLIENT_DELEGATION, arguments: JSON.stringify({ query }) };
      this.#askClient(work, call, policy, chunk);
      return;
    }
    this.executor
      .submit({
        workId,
        session: s.sessionId,
        incarnation,
        tenant: s.tenant,
        query,
        evidenceCutoffSeq,
        chunk,
        createdAtMs: s.now(),
        workSnapshot: s.book.snapshot(workId, s.nowMs()),
        policy: policy === 'when_idle' ? undefined : policy,
        ...(s.config.tools === undefined || s.config.tools.length === 0 ? {} : { clientFunctions: s.config.tools }),
      })
      .catch((err: unknown) => {
        const e = toVenusError(err);
        s.writer.error(e.code, `delegation ${workId} was not accepted: ${e.message}`);
        this.setState(workId, 'FAILED', e.code);
      });
  }

  /**
   * Takes over the delegations a previous incarnation left open (failover, drain): they stay in the
   * book under their ids, the executor re-binds them here, and their results are admitted by this
   * incarnation (never expired as `stale_incarnation`), each once.
   */
  rebind(works: readonly OpenWork[]): void {
    const { s } = this;
    const incarnation = s.model.incarnation;
    for (const open of works) {
      const record = s.book.works.add(open.workId, open.utteranceId, open.query, open.createdAtMs);
      record.state = open.state;
      record.rebound = true;
      const { workId } = open;
      this.executor.adopt?.({ workId, session: s.sessionId, incarnation }).catch((err: unknown) => {
        s.writer.error(toVenusError(err).code, `delegation ${workId} could not be re-bound: ${String(err)}`);
      });
    }
  }

  onWorkEvent(event: WorkEvent): void {
    const { s } = this;
    const work = s.book.works.get(event.workId);
    if (!work) return;
    if (event.kind === 'state') {
      if (event.functionName) work.functionName = event.functionName;
      if (event.state === 'QUEUED' && work.state === 'QUEUED') return;
      this.setState(event.workId, event.state, event.reason, undefined, event.functionName);
      return;
    }
    if (work.state === 'CANCELLING' || work.state === 'CANCELLED') return;
    if (event.kind === 'progress') {
      const { workId, message, elapsedMs } = event;
      s.writer.append({ stream: 'background', type: 'work.progress', data: { workId, message, elapsedMs } });
      return;
    }
    if (work.resultSeq !== null) return; // a retried job's second result: delivered once
    const parsed = BackendResultSchema.safeParse(event.result);
    if (!parsed.success || parsed.data.session !== s.sessionId) {
      s.writer.error('invalid_event', `result for ${event.workId} is malformed`);
      return;
    }
    const { clientCall, ...result } = parsed.data;
    if (clientCall !== undefined) this.#askClient(work, clientCall, result.policy);
    else this.#land(result);
  }

  /** The client is asked to run the call; its output (clientOutput) becomes the work's result. */
  #askClient(work: WorkRecord, call: ClientCall, policy: BackendResult['policy'], chunk?: number): void {
    if (work.clientCall !== undefined) return; // a retried job's second plan: the client is asked once
    const { s } = this;
    const callId = clientCallId(work.workId);
    work.clientCall = { callId, name: call.name, askedAtMs: s.nowMs(), policy };
    const data = { workId: work.workId, callId, name: call.name, arguments: call.arguments };
    s.writer.append({ stream: 'background', type: 'work.client_call', data }, chunk);
  }

  /**
   * A client's `function_call_output` for the call of one of this session's works: the work's result,
   * landed like the harness's own and admitted under the work's delivery policy. An unknown call is
   * refused; one no longer waiting (answered, cancelled, timed out) is dropped. Neither changes anything.
   */
  clientOutput(callId: string, output: string, eventId?: string): void {
    const { s } = this;
    const work = s.book.works.all().find((w) => w.clientCall?.callId === callId);
    if (work?.clientCall !== undefined && (work.resultSeq !== null || work.state !== 'RUNNING')) {
      return; // answered already, cancelled or timed out: its work.state said so, and this output comes too late
    }
    if (work?.clientCall === undefined) {
      const message = `no function call ${callId} is waiting for output in this session`;
      s.writer.append({
        stream: 'system',
        type: 'session.error',
        data: { code: 'work_not_found', message, ...(eventId === undefined ? {} : { eventId }) },
      });
      return;
    }
    const text = spokenClientOutput(output).slice(0, DELEGATION_LIMITS.maxResultChars);
    this.#land(this.#clientResult(work.workId, work.clientCall, true, text === '' ? 'Done.' : text, output));
  }

  /** Client calls whose output is overdue fail, with an apology to speak. */
  #expireClientCalls(nowMs: number): void {
    for (const work of this.s.book.works.all()) {
      const call = work.clientCall;
      if (call === undefined || work.state !== 'RUNNING' || work.resultSeq !== null) continue;
      if (nowMs - call.askedAtMs < CLIENT_FUNCTION_LIMITS.outputTimeoutMs) continue;
      const text = `Sorry, I couldn't get that: the app did not answer in time.`;
      this.#land(this.#clientResult(work.workId, call, false, text, undefined));
    }
  }

  #clientResult(
    workId: string,
    call: NonNullable<WorkRecord['clientCall']>,
    ok: boolean,
    text: string,
    output: string | undefined,
  ): BackendResult {
    const { s } = this;
    const completedAtMs = s.now();
    return {
      workId,
      session: s.sessionId,
      incarnation: s.model.incarnation,
      ok,
      text,
      functionName: call.name,
      policy: call.policy,
      completedAtMs,
      expiresAtMs: completedAtMs + DELEGATION_LIMITS.resultTtlMs,
      ...(output === undefined ? {} : { data: { output } }),
    };
  }

  #land(landed: BackendResult): void {
    const { s } = this;
    const result = { ...landed, text: stripReservedTags(landed.text) };
    const reason = result.ok ? undefined : 'function failed';
    this.setState(result.workId, result.ok ? 'COMPLETED' : 'FAILED', reason);
    const ev = s.writer.append({ stream: 'background', type: 'work.result', data: { result } });
    const overflowed = s.book.land(result, ev.seq, ev.chunk, ev.atMs);
    if (overflowed) this.setState(overflowed, 'EXPIRED', 'result buffer full');
  }

  /** Admission at the boundary that ends `chunk`: as planned by the scheduler, in its order. */
  admit(chunk: number): void {
    const { s } = this;
    const nowMs = s.nowMs();
    this.#expireClientCalls(nowMs);
    const plan = s.book.planBoundary({
      chunk,
      nowMs,
      wallNowMs: s.now(),
      incarnation: s.model.incarnation,
      userSpeaking: s.userSpeaking,
      assistantBusy: s.active() !== null || s.ledger.isAudible(nowMs),
      lastActivityAtMs: s.lastActivityAtMs,
    });
    for (const { pending, reason } of plan.expire) this.setState(pending.result.workId, 'EXPIRED', reason, chunk);
    for (const { pending, mode, cutIn } of plan.admit) {
      const { workId } = pending.result;
      if (cutIn) this.cutIn(chunk);
      const attemptId = `${workId}:${s.model.incarnation}`;
      const work = s.book.works.get(workId);
      if (work) work.attemptId = attemptId;
      const text = `<backend>${stripReservedTags(pending.result.text)}</backend>`;
      s.model.guard(s.model.model.prefill({ text, workId, attemptId, mode }));
      s.writer.append(
        { stream: 'background', type: 'work.admitted', data: { workId, resultSeq: pending.resultSeq, mode } },
        chunk,
      );
      if (mode === 'silent') {
        this.setState(workId, 'DELIVERED', 'silent', chunk);
      } else {
        s.userInputSinceAdmission = false;
        this.setState(workId, 'DELIVERING', undefined, chunk);
      }
    }
  }

  /** `fromClient`: a client asked (its event id, when it gave one, goes on the refusal). */
  cancel(workId: string, reason: string, fromClient: boolean, eventId?: string): void {
    const { s } = this;
    if (!s.book.works.get(workId)) {
      if (fromClient) {
        const message = `no work ${workId} in this session`;
        s.writer.append({
          stream: 'system',
          type: 'session.error',
          data: { code: 'work_not_found', message, ...(eventId === undefined ? {} : { eventId }) },
        });
      }
      return;
    }
    if (!this.setState(workId, 'CANCELLING', reason)) return;
    s.book.dropPending(workId);
    this.executor.cancel(workId, reason).catch(() => {
      // Already finished in the background: its result is dropped here, so the cancel still holds.
      this.setState(workId, 'CANCELLED', reason);
    });
  }

  /** The result that the ended utterance `u` spoke is delivered once it was cut or fully played. */
  checkDelivered(u: UtteranceHandle, chunk?: number): void {
    if (!u.finished || !u.speaksAttemptId) return;
    const w = this.s.book.works.byAttempt(u.speaksAttemptId);
    if (!w) return;
    if (u.reason !== 'completed')
      this.setState(w.workId, 'DELIVERED', `interrupted after ${Math.round(u.ackedMs ?? 0)} ms heard`, chunk);
    else if (u.fullyPlayed && w.state === 'DELIVERING') this.setState(w.workId, 'DELIVERED', 'playback acknowledged');
  }

  setState(workId: string, state: WorkState, reason?: string, chunk?: number, functionName?: string): boolean {
    if (!this.s.book.works.transition(workId, state)) return false;
    this.s.writer.append(
      {
        stream: 'background',
        type: 'work.state',
        data: { workId, state, ...(reason ? { reason } : {}), ...(functionName ? { functionName } : {}) },
      },
      chunk,
    );
    return true;
  }
}
