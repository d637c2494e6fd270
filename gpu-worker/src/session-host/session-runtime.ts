import type {
  DelegationExecutor,
  EdgeToWorkerFrame,
  InputAudioBudget,
  MediaStore,
  ModelSession,
  SessionConfig,
  TimelineStore,
  WorkEvent,
  WorkerToEdgeFrame,
} from '@venus/protocol';
import { FloorControl } from './floor-control.ts';
import { ForegroundLoop } from './foreground-loop.ts';
import { InputAudioGate } from './input-audio-gate.ts';
import { ModelSupervisor } from './model-supervisor.ts';
import type { RecentPcm } from './recent-audio.ts';
import { SessionState } from './session-state.ts';
import { StepOutput } from './step-output.ts';
import type { ReplayedSession } from './timeline-replay.ts';
import { TimelineWriter } from './timeline-writer.ts';
import { WorkDesk } from './work-desk.ts';

/**
 * How long after the user's speech ends ticks go on: for the recogniser's final transcript (~0.5 s
 * after the speech) and for a model that holds a fragment while the user may go on (the reference
 * model waits 1.5 s more), so the reply is decided, and its speech synthesised, before the next
 * chunk boundary instead of on it.
 */
const USER_TURN_TICKS_MS = 2500;

export interface SessionRuntimeOptions {
  sessionId: string;
  tenant: string;
  incarnation: number;
  config: SessionConfig;
  model: ModelSession;
  executor: DelegationExecutor;
  store: Pick<TimelineStore, 'append' | 'read'>;
  /** Keeps the audio samples (bounded by its retention); timeline events refer to them. */
  media: MediaStore;
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
  /** The worker's own input-audio budget for this session. Default: `workerInputAudioBudget()`. */
  inputAudio?: InputAudioBudget;
  /** What an earlier incarnation left (failover, drain): open work to re-bind, a cut utterance to end. */
  resumed?: ReplayedSession;
  /**
   * The samples of `resumed.recentAudio` that could be read: the model hears them again, under
   * their own input seqs, before any live input.
   */
  recentAudio?: readonly RecentPcm[];
  /**
   * Utterances of earlier incarnations (the latest, bounded by the host): the client may still be
   * playing one when the session moves, and its acknowledgements are dropped quietly, not refused.
   */
  earlierUtterances?: ReadonlySet<string>;
}

/**
 * One session on the GPU worker: the wiring of its parts. The foreground loop steps the model once
 * per chunk after the work desk admitted eligible `<backend>` results; step output publishes what
 * the model said (delegate spans go to the work desk); interruption verdicts become timeline drafts
 * (`interruption.ts`) carried out on the utterance handle; the model supervisor reopens a lost model
 * session under a new incarnation. Everything is recorded by the timeline writer.
 *
 * Work delegated under an old incarnation keeps running, but its results fail the admission check
 * and expire as `stale_incarnation`: the new model context never saw the request.
 *
 * @example
 *   const rt = new SessionRuntime({ sessionId: 's1', tenant: 't', incarnation: 0, config, model, executor, store, emit, startSeq: 0 });
 *   rt.start();
 *   rt.handleFrame({ kind: 'text', session: 's1', itemId: 'i1', text: "what's the weather in Paris" });
 */
export class SessionRuntime {
  readonly sessionId: string;
  readonly stats = { steps: 0, missed: 0, ticks: 0 };
  private readonly s: SessionState;
  private readonly loop: ForegroundLoop;
  private readonly desk: WorkDesk;
  private readonly output: StepOutput;
  private readonly floor: FloorControl;
  private readonly inputGate: InputAudioGate;
  private inputSeq = 0;

  constructor(private readonly opts: SessionRuntimeOptions) {
    this.sessionId = opts.sessionId;
    const now = opts.now ?? Date.now;
    const startedAt = now();
    this.inputGate = new InputAudioGate(opts.inputAudio, now);
    this.loop = new ForegroundLoop({
      chunkMs: opts.config.chunkMs,
      now,
      step: (chunk) => this.step(chunk),
      ...(opts.model.perceptionTickMs
        ? { tick: { periodMs: opts.model.perceptionTickMs, run: (chunk: number) => this.perceive(chunk) } }
        : {}),
      paused: () => this.s.model.isReopening,
      onMissed: (chunk, lateMs, latencyMs) => {
        this.stats.missed += 1;
        this.s.writer.append({ stream: 'system', type: 'deadline.missed', data: { lateMs } }, chunk);
        opts.onStep?.({ latencyMs, missed: true });
      },
      onStepped: (latencyMs) => opts.onStep?.({ latencyMs, missed: false }),
      ...(opts.autoStep === false ? { autoStep: false } : {}),
    });
    const writer = new TimelineWriter({
      sessionId: opts.sessionId,
      store: opts.store,
      emit: opts.emit,
      startSeq: opts.startSeq,
      nowMs: () => now() - startedAt,
      currentChunk: () => this.loop.currentChunk,
      onFenced: (reason) => void this.close(reason),
      onUnavailable: () => void this.close('timeline_unavailable'),
    });
    const model = new ModelSupervisor({
      model: opts.model,
      incarnation: opts.incarnation,
      ...(opts.reopenModel ? { reopen: opts.reopenModel } : {}),
      onError: (code, message) => writer.error(code, message),
      onReopened: (incarnation) =>
        writer.append({
          stream: 'system',
          type: 'session.incarnation',
          data: { incarnation, reason: 'model_restarted' },
        }),
      isClosed: () => this.s.closed,
    });
    this.s = new SessionState(opts.sessionId, opts.tenant, opts.config, now, writer, model, opts.media, opts.emit);
    this.desk = new WorkDesk(this.s, opts.executor, (chunk) => this.floor.cancelResponse(chunk));
    this.output = new StepOutput(this.s, this.desk, (v, chunk) => this.floor.onInterruption(v, chunk));
    this.floor = new FloorControl(this.s, this.desk, this.output);
  }

  get config(): SessionConfig {
    return this.s.config;
  }

  start(): void {
    const { writer, config, tenant } = this.s;
    writer.append({ stream: 'system', type: 'session.config', data: { config, tenant } });
    const reason = this.opts.startSeq === 0 ? 'opened' : 'resumed';
    writer.append({
      stream: 'system',
      type: 'session.incarnation',
      data: { incarnation: this.opts.incarnation, reason },
    });
    const { resumed } = this.opts;
    if (resumed) {
      this.inputSeq = resumed.lastInputSeq;
      // An utterance cut by the handover is not replayed: its unheard rest is dropped.
      if (resumed.cut) {
        const { utteranceId } = resumed.cut;
        writer.append({
          stream: 'assistant',
          type: 'assistant.utterance',
          data: { utteranceId, phase: 'finished', reason: 'discarded' },
        });
      }
      this.desk.rebind(resumed.openWorks);
      // An utterance the user was in the middle of is heard whole by the new model (docs/fleet.md).
      const model = this.s.model.model;
      for (const { inputSeq, pcm } of this.opts.recentAudio ?? []) {
        this.s.model.guard(model.appendAudio({ inputSeq, pcm16k: pcm }));
      }
    }
    this.loop.start();
  }

  handleFrame(frame: EdgeToWorkerFrame): void {
    const { s } = this;
    if (s.closed) return;
    const model = s.model.model;
    switch (frame.kind) {
      case 'open':
        return;
      case 'config':
        s.config = frame.config;
        this.loop.setPeriod(frame.config.chunkMs);
        s.writer.append({ stream: 'system', type: 'session.config', data: { config: frame.config, tenant: s.tenant } });
        return;
      case 'audio': {
        if (frame.pcm16k.byteLength % 2 !== 0) {
          s.writer.error('audio_wrong_format', 'audio frame has an odd byte length; expected 16 kHz s16le', 'audio');
          return;
        }
        const admitted = this.inputGate.admit(frame.pcm16k.byteLength / 32);
        if (!admitted.ok) {
          if (admitted.report) s.writer.error('rate_limited', admitted.report, 'audio');
          return;
        }
        // A copy of its own: a relayed frame's bytes are often a Node Buffer, whose slice() is a view
        // on a shared pool (its .buffer is the whole pool, of any length).
        const pcm = new Int16Array(Uint8Array.prototype.slice.call(frame.pcm16k).buffer);
        const inputSeq = ++this.inputSeq;
        const audio = s.media.put(s.sessionId, 'user', pcm, 16_000);
        s.writer.append({
          stream: 'user',
          type: 'user.audio',
          data: { inputSeq, audio, durationMs: audio.durationMs },
        });
        s.model.guard(model.appendAudio({ inputSeq, pcm16k: pcm }));
        return;
      }
      case 'text': {
        const inputSeq = ++this.inputSeq;
        s.lastActivityAtMs = s.nowMs();
        s.userInputSinceAdmission = true;
        const { itemId, text } = frame;
        s.writer.append({ stream: 'user', type: 'user.text', data: { inputSeq, itemId, text } });
        s.model.guard(model.appendText({ inputSeq, itemId, text }));
        return;
      }
      case 'history': {
        // Restored history is context, not a turn: no activity, nothing for the model to answer.
        const inputSeq = ++this.inputSeq;
        const { itemId, role, text } = frame;
        s.writer.append({ stream: 'system', type: 'conversation.restored', data: { inputSeq, itemId, role, text } });
        if (model.appendHistory)
          s.model.guard(model.appendHistory({ inputSeq, itemId, role, text }), 'restoring history');
        else
          s.writer.error(
            'unsupported_feature',
            'this model port cannot take restored history items',
            'conversation.item.create',
          );
        return;
      }
      case 'response_instructions': {
        const { instructions } = frame;
        const applied = model.instructNextResponse !== undefined;
        s.writer.append({ stream: 'system', type: 'response.instructions', data: { instructions, applied } });
        if (model.instructNextResponse) s.model.guard(model.instructNextResponse({ instructions }), 'instructions');
        return;
      }
      case 'dtmf':
        s.writer.append({ stream: 'user', type: 'user.dtmf', data: { inputSeq: ++this.inputSeq, digit: frame.digit } });
        return;
      case 'playback_ack':
        this.onPlaybackAck(frame.utteranceId, frame.playedMs, frame.source, frame.eventId);
        return;
      case 'cancel_response':
        this.floor.cancelResponse(this.loop.currentChunk, true);
        return;
      case 'cancel_work':
        this.desk.cancel(frame.workId, 'client_cancel', true, frame.eventId);
        return;
      case 'function_output':
        this.desk.clientOutput(frame.callId, frame.output, frame.eventId);
        return;
      case 'close':
        void this.close(frame.reason);
        return;
    }
  }

  onWorkEvent(event: WorkEvent): void {
    if (!this.s.closed && event.session === this.sessionId) this.desk.onWorkEvent(event);
  }

  /** One chunk boundary (tests drive it by hand with `autoStep: false`). */
  boundary(): void {
    this.loop.boundary();
  }

  /** One perception tick (tests drive it by hand with `autoStep: false`, like `boundary`). */
  perceptionTick(): void {
    this.loop.perceive();
  }

  /** Admits eligible results, then steps the model for the chunk that just ended. */
  private async step(chunk: number): Promise<boolean> {
    const { s } = this;
    if (s.closed) return false;
    this.desk.admit(chunk);
    const model = s.model.model;
    const atMs = s.nowMs();
    try {
      const request = { chunk, inputSeqCutoff: this.inputSeq, atMs, assistantAudible: s.ledger.isAudible(atMs) };
      const step = await model.step(request);
      if (s.closed) return false;
      this.stats.steps += 1;
      this.output.publish(step, chunk);
      return true;
    } catch (err) {
      s.model.failed(err, model, 'model step failed');
      return false;
    }
  }

  /**
   * A perception tick: the model hears the input so far (a `listenOnly` step). While the assistant
   * holds the floor it judges overlaps now, so a user taking the floor is stopped within a tick of
   * the decision instead of at the next chunk boundary; while the user speaks, and for a while after
   * (the recogniser's final comes later), the end of their turn and its words are heard now, so the
   * reply starts at the next boundary rather than one chunk after it. Null otherwise (nothing to hear).
   */
  private perceive(chunk: number): Promise<void> | null {
    const { s } = this;
    if (s.closed) return null;
    const atMs = s.nowMs();
    const assistantAudible = s.ledger.isAudible(atMs);
    const ended = s.userSpeechEndedAtMs;
    const userTurn = s.userSpeaking || (ended !== null && atMs - ended <= USER_TURN_TICKS_MS);
    if (s.active() === null && !assistantAudible && !userTurn) return null;
    const model = s.model.model;
    const request = { chunk, inputSeqCutoff: this.inputSeq, atMs, assistantAudible, listenOnly: true };
    return model.step(request).then(
      (step) => {
        if (s.closed) return;
        this.stats.ticks += 1;
        this.output.publish(step, chunk, true);
      },
      (err) => s.model.failed(err, model, 'model step failed'),
    );
  }

  private onPlaybackAck(
    utteranceId: string,
    playedMs: number,
    source: 'client' | 'estimate' | 'truncate',
    eventId?: string,
  ): void {
    const { s } = this;
    const u = s.ledger.get(utteranceId);
    // Heard after the move: the new context was built from what had been heard before it.
    if (!u && this.opts.earlierUtterances?.has(utteranceId)) return;
    if (!u) {
      const message = `playback acknowledgement for ${utteranceId}, which is not an item of this session`;
      // The client's event id, when the ack came from one, so its error names the event it answers.
      const data = { code: 'wrong_session' as const, message, ...(eventId === undefined ? {} : { eventId }) };
      s.writer.append({ stream: 'system', type: 'session.error', data });
      return;
    }
    if (source === 'truncate') u.truncate(playedMs);
    else u.ack(playedMs);
    const heard = u.ackedMs ?? 0;
    s.writer.append({ stream: 'system', type: 'playback.ack', data: { utteranceId, playedMs: heard, source } });
    const final = source === 'truncate' || u.fullyPlayed;
    const ack = { utteranceId, playedMs: heard, final, ...(final ? { heardText: u.heardText(heard) } : {}) };
    s.model.guard(s.model.model.playbackAck(ack));
    this.desk.checkDelivered(u);
  }

  /** Resolves once every event stamped so far is in the store. */
  flushed(): Promise<void> {
    return this.s.writer.flushed();
  }

  /**
   * Lets go of the session for another worker to resume it from its timeline (a drain's planned
   * migration): the loop stops (an utterance in progress is cut; the next incarnation ends it as
   * `discarded`), every event stamped so far is stored, and the model session is closed. Unlike
   * `close`, no `session.closed` is written and the work book stays open: its delegations keep
   * running and are re-bound by the next incarnation. Emits `closed` with `reason` at the end.
   */
  async release(reason: string): Promise<void> {
    const { s } = this;
    if (s.closed) return;
    s.closed = true;
    this.loop.stop();
    await s.writer.flushed();
    await s.model.close(reason);
    this.opts.emit({ kind: 'closed', session: this.sessionId, reason });
  }

  async close(reason: string): Promise<void> {
    const { s } = this;
    if (s.closed) return;
    for (const w of s.book.inFlight()) this.desk.cancel(w.workId, 'session_closed', false);
    s.writer.append({ stream: 'system', type: 'session.closed', data: { reason } });
    s.closed = true;
    this.loop.stop();
    // A closing session does not wait out a store outage: the writer keeps retrying what it holds.
    await s.writer.flushed(true);
    await s.model.close(reason);
    s.media.endSession(this.sessionId);
    this.opts.emit({ kind: 'closed', session: this.sessionId, reason });
  }
}
