import {
  BackendResultSchema,
  DELEGATION_LIMITS,
  type DelegationExecutor,
  type EdgeToWorkerFrame,
  type ModelSession,
  type OutputStep,
  pcmDurationMs,
  pcmToBase64,
  type SessionConfig,
  stripReservedTags,
  type TimelineDraft,
  type TimelineEvent,
  type TimelineStore,
  toVenusError,
  type VenusError,
  type WorkEvent,
  type WorkerToEdgeFrame,
  type WorkState,
} from '@venus/protocol';
import { type BoundaryState, decideAdmission, type PendingResult } from './admission.ts';
import { DelegateParser } from './delegate-parser.ts';
import { PlaybackLedger, type UtteranceRecord } from './playback-ledger.ts';
import { StepClock } from './step-clock.ts';
import { WorkLedger } from './work-ledger.ts';

export interface SessionRuntimeOptions {
  sessionId: string;
  tenant: string;
  incarnation: number;
  config: SessionConfig;
  model: ModelSession;
  executor: DelegationExecutor;
  store: TimelineStore;
  emit: (frame: WorkerToEdgeFrame) => void;
  /** Last seq already stored for this session (0 for a new one). */
  startSeq: number;
  now?: () => number;
  /** Step on a timer (default). Tests may drive boundaries by hand with `boundary()`. */
  autoStep?: boolean;
  onStep?: (sample: { latencyMs: number; missed: boolean }) => void;
  /**
   * Opens a fresh model session at `incarnation` after the model lost this one (its inference
   * thread crashed and was replaced). Without it, such failures are only reported.
   */
  reopenModel?: (incarnation: number) => Promise<ModelSession>;
}

const REOPEN_ATTEMPTS = 5;
const REOPEN_BACKOFF_MS = 100;

/**
 * One session's foreground loop and its share of the shared causal timeline.
 *
 * Every chunk period it admits eligible `<backend>` results, steps the model once, and publishes what
 * the model said; it never waits for background work. It parses hidden delegate spans, hands them to
 * the executor with their evidence cutoff, keeps played-audio accounts, and carries out the three
 * interruption actions (discard, repair, park) as mechanics on the timeline.
 *
 * When the model loses the session (a retryable `model_unavailable`, e.g. a crashed inference
 * thread), the runtime reopens it with the next incarnation, records `session.incarnation`
 * (`model_restarted`) and keeps stepping; chunks while it reopens have no step. Work delegated under
 * the old incarnation keeps running, but its results fail the admission check (the incarnation no
 * longer matches) and expire as `stale_incarnation`: the new model context never saw the request.
 *
 * @example
 *   const rt = new SessionRuntime({ sessionId: 's1', tenant: 't', incarnation: 0, config, model, executor, store, emit, startSeq: 0 });
 *   rt.start();
 *   rt.handleFrame({ kind: 'text', session: 's1', itemId: 'i1', text: "what's the weather in Paris" });
 */
export class SessionRuntime {
  readonly sessionId: string;
  private readonly opts: SessionRuntimeOptions;
  private readonly now: () => number;
  private readonly startedAt: number;
  private readonly ledger = new PlaybackLedger();
  private readonly works = new WorkLedger();
  private readonly parser = new DelegateParser();
  private readonly clock: StepClock;
  private seq: number;
  private inputSeq = 0;
  private currentChunk = 0;
  private stepInFlight = false;
  private stepStartedAt = 0;
  private closed = false;
  private currentUtterance: UtteranceRecord | null = null;
  private readonly dropped = new Set<string>();
  private decision: 'listen' | 'speak' = 'listen';
  private userSpeaking = false;
  private lastActivityAtMs = 0;
  private pending: PendingResult[] = [];
  private evidenceCutoffSeq = 0;
  private workCounter = 0;
  private planCounter = 0;
  private userInputSinceAdmission = false;
  private writeQueue: TimelineEvent[] = [];
  private writing: Promise<void> | null = null;
  private reopening: Promise<void> | null = null;
  readonly stats = { steps: 0, missed: 0 };

  constructor(opts: SessionRuntimeOptions) {
    this.opts = opts;
    this.sessionId = opts.sessionId;
    this.now = opts.now ?? Date.now;
    this.startedAt = this.now();
    this.seq = opts.startSeq;
    this.clock = new StepClock(opts.config.chunkMs, () => this.boundary());
  }

  get config(): SessionConfig {
    return this.opts.config;
  }

  start(): void {
    this.append({
      stream: 'system',
      type: 'session.config',
      data: { config: this.opts.config, tenant: this.opts.tenant },
    });
    this.append({
      stream: 'system',
      type: 'session.incarnation',
      data: { incarnation: this.opts.incarnation, reason: this.opts.startSeq === 0 ? 'opened' : 'resumed' },
    });
    if (this.opts.autoStep !== false) this.clock.start();
  }

  /** Session clock in ms. */
  private nowMs(): number {
    return this.now() - this.startedAt;
  }

  // ---- inputs from the edge ---------------------------------------------------------------

  handleFrame(frame: EdgeToWorkerFrame): void {
    if (this.closed) return;
    switch (frame.kind) {
      case 'open':
        return;
      case 'config':
        this.opts.config = frame.config;
        this.clock.setPeriod(frame.config.chunkMs);
        this.append({
          stream: 'system',
          type: 'session.config',
          data: { config: frame.config, tenant: this.opts.tenant },
        });
        return;
      case 'audio': {
        if (frame.pcm16k.byteLength % 2 !== 0) {
          this.error('audio_wrong_format', 'audio frame has an odd byte length; expected 16 kHz s16le', 'audio');
          return;
        }
        const pcm = new Int16Array(frame.pcm16k.slice().buffer);
        const inputSeq = ++this.inputSeq;
        this.append({
          stream: 'user',
          type: 'user.audio',
          data: { inputSeq, pcm16k: pcmToBase64(pcm), durationMs: pcmDurationMs(pcm.length, 16_000) },
        });
        this.guard(this.opts.model.appendAudio({ inputSeq, pcm16k: pcm }));
        return;
      }
      case 'text': {
        const inputSeq = ++this.inputSeq;
        this.lastActivityAtMs = this.nowMs();
        this.userInputSinceAdmission = true;
        this.append({ stream: 'user', type: 'user.text', data: { inputSeq, itemId: frame.itemId, text: frame.text } });
        this.guard(this.opts.model.appendText({ inputSeq, itemId: frame.itemId, text: frame.text }));
        return;
      }
      case 'dtmf':
        this.append({ stream: 'user', type: 'user.dtmf', data: { inputSeq: ++this.inputSeq, digit: frame.digit } });
        return;
      case 'playback_ack':
        this.onPlaybackAck(frame.utteranceId, frame.playedMs, frame.source);
        return;
      case 'cancel_response':
        this.cancelResponse();
        return;
      case 'cancel_work':
        this.cancelWork(frame.workId, 'client_cancel', true);
        return;
      case 'close':
        void this.close(frame.reason);
        return;
    }
  }

  private onPlaybackAck(utteranceId: string, playedMs: number, source: 'client' | 'estimate' | 'truncate'): void {
    const u =
      source === 'truncate' ? this.ledger.truncate(utteranceId, playedMs) : this.ledger.ack(utteranceId, playedMs);
    if (!u) {
      this.error('wrong_session', `playback acknowledgement for ${utteranceId}, which is not an item of this session`);
      return;
    }
    const heard = u.ackedMs ?? 0;
    this.append({ stream: 'system', type: 'playback.ack', data: { utteranceId, playedMs: heard, source } });
    const final = source === 'truncate' || this.ledger.isFullyPlayed(utteranceId);
    this.guard(this.opts.model.playbackAck({ utteranceId, playedMs: heard, final }));
    this.checkDelivered(u);
  }

  /** Client asked to stop the response (response.cancel / output_audio_buffer.clear). */
  private cancelResponse(): void {
    const u = this.activeUtterance();
    if (!u) return;
    this.interrupt(u, { action: 'discard', cause: 'interruption', cancelsWork: false });
    if (this.opts.model.cancelResponse) this.guard(this.opts.model.cancelResponse());
  }

  // ---- the foreground loop --------------------------------------------------------------------

  /** One chunk boundary: admit eligible results, then step the model for the chunk that just ended. */
  boundary(): void {
    if (this.closed) return;
    const chunk = this.currentChunk;
    this.currentChunk += 1;
    if (this.reopening !== null) return;
    if (this.stepInFlight) {
      this.stats.missed += 1;
      const lateMs = Math.max(0, this.now() - this.stepStartedAt - this.opts.config.chunkMs);
      this.append({ stream: 'system', type: 'deadline.missed', data: { lateMs } }, chunk);
      this.opts.onStep?.({ latencyMs: this.now() - this.stepStartedAt, missed: true });
      return;
    }
    this.admit(chunk);
    this.stepInFlight = true;
    this.stepStartedAt = this.now();
    const atMs = this.nowMs();
    const model = this.opts.model;
    model.step({ chunk, inputSeqCutoff: this.inputSeq, atMs, assistantAudible: this.ledger.isAudible(atMs) }).then(
      (step) => {
        this.stepInFlight = false;
        if (this.closed) return;
        this.stats.steps += 1;
        this.processStep(step, chunk);
        this.opts.onStep?.({ latencyMs: this.now() - this.stepStartedAt, missed: false });
      },
      (err: unknown) => {
        this.stepInFlight = false;
        if (this.closed) return;
        const e = toVenusError(err, 'model_step_failed');
        if (!this.modelLost(e, model)) this.error(e.code, `model step failed: ${String(err)}`);
      },
    );
  }

  private admit(chunk: number): void {
    const nowMs = this.nowMs();
    let spokeThisBoundary = false;
    const keep: PendingResult[] = [];
    for (const p of this.pending) {
      if (p.busyAtFirstBoundary === null && chunk > p.landedChunk) p.busyAtFirstBoundary = this.userSpeaking;
      const state: BoundaryState = {
        chunk,
        nowMs,
        wallNowMs: this.now(),
        incarnation: this.opts.incarnation,
        userSpeaking: this.userSpeaking,
        assistantBusy: spokeThisBoundary || this.currentUtterance !== null || this.ledger.isAudible(nowMs),
        lastActivityAtMs: this.lastActivityAtMs,
      };
      const verdict = decideAdmission(p, state);
      const { workId } = p.result;
      if (verdict.kind === 'wait' || (verdict.kind === 'admit' && verdict.mode === 'speak' && spokeThisBoundary)) {
        keep.push(p);
        continue;
      }
      if (verdict.kind === 'expire') {
        this.setWorkState(workId, 'EXPIRED', verdict.reason, chunk);
        continue;
      }
      const attemptId = `${workId}:${this.opts.incarnation}`;
      const work = this.works.get(workId);
      if (work) work.attemptId = attemptId;
      this.guard(
        this.opts.model.prefill({
          text: `<backend>${stripReservedTags(p.result.text)}</backend>`,
          workId,
          attemptId,
          mode: verdict.mode,
        }),
      );
      this.append(
        { stream: 'background', type: 'work.admitted', data: { workId, resultSeq: p.resultSeq, mode: verdict.mode } },
        chunk,
      );
      if (verdict.mode === 'silent') {
        this.setWorkState(workId, 'DELIVERED', 'silent', chunk);
      } else {
        spokeThisBoundary = true;
        this.userInputSinceAdmission = false;
        this.setWorkState(workId, 'DELIVERING', undefined, chunk);
      }
    }
    this.pending = keep;
  }

  private processStep(step: OutputStep, chunk: number): void {
    const nowMs = this.nowMs();
    if (step.userSpeech) {
      this.userSpeaking = step.userSpeech.state === 'started';
      this.lastActivityAtMs = nowMs;
      this.append({ stream: 'user', type: 'user.speech', data: { ...step.userSpeech } }, chunk);
    }
    if (step.interruption) {
      const u = this.activeUtterance();
      if (step.interruption.action !== 'continue' && !u && step.interruption.cancelsWork) {
        this.cancelLastTurnWork(step.interruption, chunk);
      } else if (step.interruption.action === 'continue' || !u) {
        this.append(
          {
            stream: 'assistant',
            type: 'assistant.interruption',
            data: {
              action: step.interruption.action === 'continue' ? 'continue' : step.interruption.action,
              cause: step.interruption.cause,
              utteranceId: u?.id ?? null,
              heardMs: u ? this.ledger.heardMs(u.id, nowMs) : 0,
              heardText: '',
              cancelledWork: [],
            },
          },
          chunk,
        );
      } else {
        this.interrupt(u, step.interruption, chunk);
      }
    }
    const id = step.utteranceId;
    if (id === null || this.dropped.has(id)) {
      this.setDecision('listen', chunk);
      return;
    }
    if (this.currentUtterance?.id !== id && !this.ledger.get(id)) this.startUtterance(step, chunk);
    const u = this.ledger.get(id);
    if (!u || u.finished) return;
    this.setDecision(step.decision, chunk);
    if (step.text) this.consumeText(u, step.text, chunk);
    if (step.audio && step.audio.length > 0) {
      const durationMs = pcmDurationMs(step.audio.length, 24_000);
      this.append(
        {
          stream: 'assistant',
          type: 'assistant.audio',
          data: {
            utteranceId: id,
            audioChunkSeq: step.audioChunkSeq,
            pcm24k: pcmToBase64(step.audio),
            startMs: u.emittedMs,
            durationMs,
          },
        },
        chunk,
      );
      this.ledger.addAudio(id, durationMs, nowMs);
      this.lastActivityAtMs = nowMs + durationMs;
    }
    if (step.resumeOffer)
      this.append({ stream: 'assistant', type: 'assistant.resume_offer', data: { ...step.resumeOffer } }, chunk);
    if (step.turnFinished) {
      this.finishUtterance(u, step.finishReason === 'interrupted' ? 'discarded' : 'completed', chunk);
      this.append({ stream: 'assistant', type: 'assistant.control', data: { decision: 'turn_eos' } }, chunk);
      this.decision = 'listen';
    }
  }

  private startUtterance(step: OutputStep, chunk: number): void {
    const id = step.utteranceId as string;
    if (this.currentUtterance && !this.currentUtterance.finished)
      this.finishUtterance(this.currentUtterance, 'completed', chunk);
    const u = this.ledger.start(id);
    this.currentUtterance = u;
    const continues = step.continues?.utteranceId ?? step.continues?.planId;
    this.append(
      {
        stream: 'assistant',
        type: 'assistant.utterance',
        data: { utteranceId: id, phase: 'started', ...(continues ? { continues } : {}) },
      },
      chunk,
    );
    if (step.continues?.planId)
      this.append({ stream: 'assistant', type: 'assistant.resumed', data: { planId: step.continues.planId } }, chunk);
    const speaking = step.speaksPrefill
      ? this.works.byAttempt(step.speaksPrefill.attemptId)
      : !step.continues && !step.resumeOffer && !this.userInputSinceAdmission
        ? this.works.all().find((w) => w.state === 'DELIVERING' && w.deliveredBy === null && w.attemptId !== null)
        : undefined;
    if (speaking) {
      speaking.deliveredBy = id;
      u.speaksAttemptId = speaking.attemptId;
    }
  }

  private consumeText(u: UtteranceRecord, text: string, chunk: number): void {
    for (const ev of this.parser.push(text)) {
      if (ev.kind === 'text') {
        this.ledger.addText(u.id, ev.text);
        this.append(
          { stream: 'assistant', type: 'assistant.text', data: { utteranceId: u.id, delta: ev.text } },
          chunk,
        );
      } else if (ev.kind === 'open') {
        // The evidence snapshot: the timeline as it stood when the opening tag appeared.
        this.evidenceCutoffSeq = this.seq;
      } else if (ev.kind === 'close') {
        this.delegate(u, ev.query, chunk);
      } else {
        this.error('delegate_parse_error', `delegate span error in ${u.id}: ${ev.reason}`);
      }
    }
  }

  private delegate(u: UtteranceRecord, query: string, chunk: number): void {
    if (query.length > DELEGATION_LIMITS.maxQueryChars) {
      this.error(
        'delegate_query_too_long',
        `delegate query of ${query.length} chars exceeds ${DELEGATION_LIMITS.maxQueryChars}`,
      );
      return;
    }
    if (this.works.inFlightCount() >= DELEGATION_LIMITS.maxInFlightPerSession) {
      this.error('delegate_limit_reached', `${DELEGATION_LIMITS.maxInFlightPerSession} delegations already in flight`);
      return;
    }
    const workId = `work_${this.sessionId.slice(-8)}_${this.opts.incarnation}_${++this.workCounter}`;
    const evidenceCutoffSeq = this.evidenceCutoffSeq;
    this.append(
      { stream: 'assistant', type: 'assistant.delegate', data: { workId, query, evidenceCutoffSeq, private: true } },
      chunk,
    );
    this.works.add(workId, u.id, query, this.nowMs());
    u.workIds.push(workId);
    this.append({ stream: 'background', type: 'work.state', data: { workId, state: 'QUEUED' } }, chunk);
    if (isStatusQuery(query)) {
      this.answerStatus(workId);
      return;
    }
    this.opts.executor
      .submit({
        workId,
        session: this.sessionId,
        incarnation: this.opts.incarnation,
        tenant: this.opts.tenant,
        query,
        evidenceCutoffSeq,
        chunk,
        createdAtMs: this.now(),
        policy: this.opts.config.deliveryPolicy === 'when_idle' ? undefined : this.opts.config.deliveryPolicy,
      })
      .catch((err: unknown) => {
        const e = toVenusError(err);
        this.error(e.code, `delegation ${workId} was not accepted: ${e.message}`);
        this.setWorkState(workId, 'FAILED', e.code);
      });
  }

  /**
   * "How's that going?" is answered here, from the session's own work states, rather than by the
   * harness: the host is the one place that knows every delegation of the session and where it stands.
   * It runs through the same lifecycle and admission as any other result.
   */
  private answerStatus(workId: string): void {
    const nowMs = this.nowMs();
    const others = this.works.all().filter((w) => w.workId !== workId && !isStatusQuery(w.query));
    const lines = others
      .filter((w) => ['QUEUED', 'RUNNING', 'COMPLETED', 'DELIVERING'].includes(w.state))
      .map((w) => {
        const ago = Math.max(1, Math.round((nowMs - w.createdAtMs) / 1000));
        const where =
          w.state === 'QUEUED'
            ? 'is waiting to start'
            : w.state === 'RUNNING'
              ? `is still running, ${ago} seconds so far`
              : 'is done, and I will tell you in a moment';
        return `"${w.query}" ${where}.`;
      });
    const text = lines.length > 0 ? lines.join(' ') : 'Nothing is pending right now.';
    const now = this.now();
    const base = { session: this.sessionId, incarnation: this.opts.incarnation, workId };
    this.onWorkEvent({ ...base, kind: 'state', state: 'RUNNING', functionName: 'work_status' });
    this.onWorkEvent({
      ...base,
      kind: 'result',
      result: {
        ...base,
        ok: true,
        text,
        data: { pending: lines.length },
        functionName: 'work_status',
        policy: 'when_idle',
        completedAtMs: now,
        expiresAtMs: now + DELEGATION_LIMITS.resultTtlMs,
      },
    });
  }

  // ---- interruptions -------------------------------------------------------------------------

  private activeUtterance(): UtteranceRecord | null {
    if (this.currentUtterance && !this.currentUtterance.finished) return this.currentUtterance;
    return null;
  }

  private interrupt(
    u: UtteranceRecord,
    intr: NonNullable<OutputStep['interruption']>,
    chunk = this.currentChunk,
  ): void {
    const nowMs = this.nowMs();
    const heardMs = this.ledger.heardMs(u.id, nowMs);
    const heardText = this.ledger.heardText(u.id, heardMs);
    const cancelled = intr.cancelsWork
      ? u.workIds.filter((w) => {
          const rec = this.works.get(w);
          return rec !== undefined && ['QUEUED', 'RUNNING', 'COMPLETED'].includes(rec.state);
        })
      : [];
    const planId = intr.action === 'park' ? `plan_${++this.planCounter}` : undefined;
    this.append(
      {
        stream: 'assistant',
        type: 'assistant.interruption',
        data: {
          action: intr.action,
          cause: intr.cause,
          utteranceId: u.id,
          heardMs,
          heardText,
          cancelledWork: cancelled,
          ...(planId ? { planId } : {}),
        },
      },
      chunk,
    );
    if (planId) {
      const remainder = u.text.trim().slice(heardText.length).trim();
      this.append(
        { stream: 'assistant', type: 'assistant.parked', data: { planId, utteranceId: u.id, remainder } },
        chunk,
      );
      this.guard(this.opts.model.park({ planId, utteranceId: u.id, remainder }));
    }
    const reason = intr.action === 'park' ? 'parked' : intr.action === 'repair' ? 'repaired' : 'discarded';
    this.ledger.truncate(u.id, heardMs);
    this.finishUtterance(u, reason, chunk);
    this.dropped.add(u.id);
    this.ledger.clearAudible(nowMs);
    this.guard(this.opts.model.playbackAck({ utteranceId: u.id, playedMs: heardMs, final: true }));
    for (const w of cancelled) this.cancelWork(w, `interrupted:${intr.action}`, false);
  }

  /**
   * A cancel that arrives after the reply already ended (typically a spoken "never mind" whose
   * transcript lands after voice activity stopped the assistant): cancel the undelivered work of the
   * most recent utterance that delegated.
   */
  private cancelLastTurnWork(intr: NonNullable<OutputStep['interruption']>, chunk: number): void {
    const open = this.works.all().filter((w) => ['QUEUED', 'RUNNING', 'COMPLETED'].includes(w.state));
    const last = open.at(-1)?.utteranceId ?? null;
    const cancelled = open.filter((w) => w.utteranceId === last).map((w) => w.workId);
    this.append(
      {
        stream: 'assistant',
        type: 'assistant.interruption',
        data: {
          action: intr.action,
          cause: intr.cause,
          utteranceId: last,
          heardMs: 0,
          heardText: '',
          cancelledWork: cancelled,
        },
      },
      chunk,
    );
    for (const w of cancelled) this.cancelWork(w, 'user_cancelled', false);
  }

  private finishUtterance(u: UtteranceRecord, reason: NonNullable<UtteranceRecord['reason']>, chunk: number): void {
    if (u.finished) return;
    u.finished = true;
    u.reason = reason;
    if (this.currentUtterance === u) this.currentUtterance = null;
    const parseErrors = this.parser.endTurn();
    if (reason === 'completed')
      for (const e of parseErrors)
        this.error('delegate_parse_error', `delegate span error in ${u.id}: ${e.kind === 'error' ? e.reason : e.kind}`);
    this.append(
      { stream: 'assistant', type: 'assistant.utterance', data: { utteranceId: u.id, phase: 'finished', reason } },
      chunk,
    );
    if (reason !== 'completed' && u.speaksAttemptId) {
      const w = this.works.byAttempt(u.speaksAttemptId);
      if (w)
        this.setWorkState(w.workId, 'DELIVERED', `interrupted after ${Math.round(u.ackedMs ?? 0)} ms heard`, chunk);
    }
    this.checkDelivered(u);
  }

  private checkDelivered(u: UtteranceRecord): void {
    if (!u.speaksAttemptId || !this.ledger.isFullyPlayed(u.id)) return;
    const w = this.works.byAttempt(u.speaksAttemptId);
    if (w && w.state === 'DELIVERING') this.setWorkState(w.workId, 'DELIVERED', 'playback acknowledged');
  }

  private setDecision(decision: 'listen' | 'speak', chunk: number): void {
    if (decision === this.decision) return;
    this.decision = decision;
    this.append({ stream: 'assistant', type: 'assistant.control', data: { decision } }, chunk);
  }

  // ---- background work -----------------------------------------------------------------------

  onWorkEvent(event: WorkEvent): void {
    if (this.closed || event.session !== this.sessionId) return;
    const work = this.works.get(event.workId);
    if (!work) return;
    if (event.kind === 'state') {
      if (event.state === 'QUEUED' && work.state === 'QUEUED') return;
      this.setWorkState(event.workId, event.state, event.reason, undefined, event.functionName);
      return;
    }
    if (work.state === 'CANCELLING' || work.state === 'CANCELLED') return;
    if (event.kind === 'progress') {
      this.append({
        stream: 'background',
        type: 'work.progress',
        data: { workId: event.workId, message: event.message, elapsedMs: event.elapsedMs },
      });
      return;
    }
    if (work.resultSeq !== null) return; // a retried job's second result: delivered once
    const parsed = BackendResultSchema.safeParse(event.result);
    if (!parsed.success || parsed.data.session !== this.sessionId) {
      this.error('invalid_event', `result for ${event.workId} is malformed`);
      return;
    }
    const result = { ...parsed.data, text: stripReservedTags(parsed.data.text) };
    if (result.ok) this.setWorkState(event.workId, 'COMPLETED');
    else this.setWorkState(event.workId, 'FAILED', 'function failed');
    const ev = this.append({ stream: 'background', type: 'work.result', data: { result } });
    work.resultSeq = ev.seq;
    this.pending.push({
      result,
      resultSeq: ev.seq,
      landedChunk: ev.chunk,
      landedAtMs: ev.atMs,
      busyAtFirstBoundary: null,
    });
    if (this.pending.length > DELEGATION_LIMITS.maxBufferedResultsPerSession) {
      const dropped = this.pending.shift();
      if (dropped) this.setWorkState(dropped.result.workId, 'EXPIRED', 'result buffer full');
    }
  }

  private cancelWork(workId: string, reason: string, fromClient: boolean): void {
    const work = this.works.get(workId);
    if (!work) {
      if (fromClient) this.error('work_not_found', `no work ${workId} in this session`);
      return;
    }
    if (!this.setWorkState(workId, 'CANCELLING', reason)) return;
    this.pending = this.pending.filter((p) => p.result.workId !== workId);
    this.opts.executor.cancel(workId, reason).catch(() => {
      // Already finished in the background: the result is dropped here, so cancellation still holds.
      this.setWorkState(workId, 'CANCELLED', reason);
    });
  }

  private setWorkState(
    workId: string,
    state: WorkState,
    reason?: string,
    chunk?: number,
    functionName?: string,
  ): boolean {
    if (!this.works.transition(workId, state)) return false;
    this.append(
      {
        stream: 'background',
        type: 'work.state',
        data: { workId, state, ...(reason ? { reason } : {}), ...(functionName ? { functionName } : {}) },
      },
      chunk,
    );
    return true;
  }

  // ---- timeline ------------------------------------------------------------------------------

  /** Stamps and publishes an event now; the store write follows in order without blocking the loop. */
  private append(draft: TimelineDraft, chunk = this.currentChunk): TimelineEvent {
    const event = { ...draft, session: this.sessionId, seq: ++this.seq, chunk, atMs: this.nowMs() } as TimelineEvent;
    this.writeQueue.push(event);
    this.flush();
    // The client's own microphone audio is stored, not echoed back: relaying it would double the
    // messages of every stream for nothing the edge or the client needs.
    if (event.type !== 'user.audio') this.opts.emit({ kind: 'timeline', session: this.sessionId, event });
    return event;
  }

  private flush(): void {
    if (this.writing || this.writeQueue.length === 0) return;
    const batch = this.writeQueue;
    this.writeQueue = [];
    this.writing = this.opts.store.append(batch).then(
      () => {
        this.writing = null;
        this.flush();
      },
      (err: unknown) => {
        this.writing = null;
        const e = toVenusError(err);
        this.opts.emit({
          kind: 'error',
          session: this.sessionId,
          code: e.code,
          message: `timeline write failed: ${e.message}`,
        });
        if (e.code === 'timeline_seq_conflict') void this.close('fenced: another writer owns this timeline');
      },
    );
  }

  /** Resolves once every event stamped so far is in the store. */
  async flushed(): Promise<void> {
    while (this.writing || this.writeQueue.length > 0) {
      this.flush();
      await this.writing;
    }
  }

  private error(code: VenusError['code'], message: string, eventType?: string): void {
    this.append({
      stream: 'system',
      type: 'session.error',
      data: { code, message, ...(eventType ? { eventType } : {}) },
    });
  }

  private guard(p: Promise<unknown>): void {
    const model = this.opts.model;
    p.catch((err: unknown) => {
      if (this.closed) return;
      const e = toVenusError(err, 'model_step_failed');
      if (!this.modelLost(e, model)) this.error(e.code, `model input failed: ${String(err)}`);
    });
  }

  /** Whether a model failure is handled by reopening (or came from an incarnation already replaced). */
  private modelLost(e: VenusError, model: ModelSession): boolean {
    if (model !== this.opts.model) return true;
    if (e.code !== 'model_unavailable' || !e.retryable || !this.opts.reopenModel) return false;
    this.reopening ??= this.reopen(this.opts.reopenModel);
    return true;
  }

  private async reopen(open: (incarnation: number) => Promise<ModelSession>): Promise<void> {
    const lost = this.opts.model;
    for (let attempt = 1; !this.closed; attempt++) {
      const incarnation = this.opts.incarnation + 1;
      try {
        const model = await open(incarnation);
        if (this.closed) {
          await model.close('session_closed').catch(() => undefined);
          break;
        }
        this.opts.model = model;
        this.opts.incarnation = incarnation;
        this.append({
          stream: 'system',
          type: 'session.incarnation',
          data: { incarnation, reason: 'model_restarted' },
        });
        void lost.close('model_restarted').catch(() => undefined);
        break;
      } catch (err) {
        if (attempt >= REOPEN_ATTEMPTS) {
          const e = toVenusError(err, 'model_unavailable');
          this.error(e.code, `could not reopen the model session: ${e.message}`);
          break;
        }
        await new Promise((r) => setTimeout(r, REOPEN_BACKOFF_MS * 2 ** attempt));
      }
    }
    this.reopening = null;
  }

  async close(reason: string): Promise<void> {
    if (this.closed) return;
    for (const w of this.works.open())
      if (['QUEUED', 'RUNNING'].includes(w.state)) this.cancelWork(w.workId, 'session_closed', false);
    this.append({ stream: 'system', type: 'session.closed', data: { reason } });
    this.closed = true;
    this.clock.stop();
    await this.flushed().catch(() => undefined);
    await this.opts.model.close(reason).catch(() => undefined);
    this.opts.emit({ kind: 'closed', session: this.sessionId, reason });
  }
}

/** A delegated question about the session's own work ("what is the status of my requests?"). */
export function isStatusQuery(query: string): boolean {
  return /\b(status|progress)\b.*\b(request|requests|work|lookup|lookups|task|tasks)\b/i.test(query);
}
