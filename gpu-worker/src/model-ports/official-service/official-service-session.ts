import {
  type ContextEntry,
  type InputAck,
  type ModelSession,
  type OutputStep,
  type PrefillAck,
  type PrefillRequest,
  pcmDurationMs,
  pcmToBase64,
  type StepRequest,
  VenusError,
} from '@venus/protocol';
import { OutputStepTranslator } from './output-step-translator.ts';
import { failureToError, type ServiceClient, sleep } from './service-client.ts';
import type { CheckpointTokenizer } from './token-decoder.ts';
import {
  type InputAccepted,
  InputAcceptedSchema,
  ModelOutputStepSchema,
  PlaybackAcceptedSchema,
  PrefillAppliedSchema,
  SessionClosedSchema,
  type SessionOpened,
} from './wire-schemas.ts';

export interface OfficialServiceSessionOptions {
  client: ServiceClient;
  tokenizer: CheckpointTokenizer;
  opened: SessionOpened;
  /** The host's incarnation; the service numbers its own and we keep both. */
  incarnation: number;
  outputTimeoutS: number;
  serviceChunkMs: number;
  retries: number;
  retryBaseMs: number;
  onClosed: (session: OfficialServiceSession) => void;
}

/**
 * One session on the official model service, seen through the runtime's ModelSession contract.
 *
 * Inputs and prefills go out strictly one after another (the service fences `event_seq` and applies
 * prefill at an input boundary); the host's input sequence numbers are mapped to the service's
 * `input_seq` so a step's cutoff comes back in the host's numbering. Each output step's delta token
 * ids are decoded with the checkpoint tokenizer; each service generation that speaks becomes one
 * utterance. Typed text has no endpoint in the official service and is refused (`unsupported_feature`).
 *
 * @example
 *   const s = await port.openSession({ sessionId: 's1', incarnation: 0 });
 *   await s.appendAudio({ inputSeq: 1, pcm16k: oneSecondOfMic });
 *   const step = await s.step({ chunk: 0, inputSeqCutoff: 1, atMs: 1000, assistantAudible: false });
 */
export class OfficialServiceSession implements ModelSession {
  readonly sessionId: string;
  readonly incarnation: number;
  readonly serviceIncarnation: number;
  private readonly opts: OfficialServiceSessionOptions;
  private readonly steps: OutputStepTranslator;
  private readonly openedAt = Date.now();
  private state: 'open' | 'superseded' | 'closed' = 'open';
  private chain: Promise<unknown> = Promise.resolve();
  private eventSeq = 0;
  private lastInputSeq = Number.NEGATIVE_INFINITY;
  private audioMs = 0;
  private readonly hostSeqByServiceSeq = new Map<number, number>();
  private cutoff = 0;
  private stepSeq = 0;
  private readonly parked = new Map<string, { utteranceId: string; remainder: string }>();

  constructor(opts: OfficialServiceSessionOptions) {
    this.opts = opts;
    this.sessionId = opts.opened.session_id;
    this.serviceIncarnation = opts.opened.incarnation;
    this.incarnation = opts.incarnation;
    this.steps = new OutputStepTranslator(
      opts.tokenizer,
      opts.opened.capabilities.special_token_ids,
      this.sessionId,
      this.serviceIncarnation,
    );
  }

  get isOpen(): boolean {
    return this.state === 'open';
  }

  /** A newer incarnation of this session was opened; every later call is fenced out. */
  supersede(): void {
    if (this.state === 'open') this.state = 'superseded';
  }

  appendAudio(input: { inputSeq: number; pcm16k: Int16Array }): Promise<InputAck> {
    return this.input(input.inputSeq, async (eventSeq) => {
      if (input.pcm16k.length === 0) return null;
      const startMs = Math.floor(this.audioMs);
      this.audioMs += pcmDurationMs(input.pcm16k.length, 16_000);
      const body = {
        ...this.ids(),
        event_seq: eventSeq,
        start_ms: startMs,
        end_ms: Math.max(startMs + 1, Math.round(this.audioMs)),
        data: pcmToBase64(input.pcm16k),
        format: 'pcm_s16le',
        sample_rate_hz: 16_000,
        channels: 1,
        sample_width_bytes: 2,
      };
      return this.post('/audio', body);
    });
  }

  appendVideoFrame(input: { inputSeq: number; mimeType: string; data: Uint8Array }): Promise<InputAck> {
    if (input.mimeType !== 'image/jpeg' && input.mimeType !== 'image/png')
      return Promise.reject(
        new VenusError('unsupported_feature', `video frames must be image/jpeg or image/png, not ${input.mimeType}`),
      );
    return this.input(input.inputSeq, async (eventSeq) =>
      this.post('/video_frame', {
        ...this.ids(),
        event_seq: eventSeq,
        captured_at_ms: this.clockMs(),
        data: Buffer.from(input.data.buffer, input.data.byteOffset, input.data.byteLength).toString('base64'),
        mime_type: input.mimeType,
      }),
    );
  }

  async appendText(_input: { inputSeq: number; itemId: string; text: string }): Promise<InputAck> {
    this.ensureUsable();
    throw new VenusError(
      'unsupported_feature',
      'the official Realtime-Venus model service takes audio and video only; typed text has no input endpoint',
    );
  }

  /**
   * Restored history. The service's context is its own KV cache, fed only by audio, video and
   * private prefills: a restored function call with its output is a `<backend>` result and goes in
   * as a silent prefill; a user, assistant or system message has no input and is refused.
   */
  async appendHistory(input: { inputSeq: number; itemId: string } & ContextEntry): Promise<InputAck> {
    this.ensureUsable();
    if (input.role !== 'backend') {
      throw new VenusError(
        'unsupported_feature',
        `the official Realtime-Venus model service has no input for a restored ${input.role} message; only a function call with its output can be restored (as a silent prefill)`,
      );
    }
    this.reserve(input.inputSeq);
    const text = `<backend>${input.text}</backend>`;
    await this.prefill({ text, attemptId: `history_${input.itemId}`, mode: 'silent' });
    return { inputSeq: input.inputSeq };
  }

  async prefill(request: PrefillRequest): Promise<PrefillAck> {
    this.ensureUsable();
    return this.serialized(async () => {
      const body = {
        ...this.ids(),
        work_id: request.workId ?? request.attemptId,
        attempt_id: request.attemptId,
        text_list: [request.text],
        visibility: 'private',
        // The release's demo server always resumes generation after a prefill; the flag states intent.
        resume_generation: request.mode === 'speak',
      };
      for (let attempt = 0; ; attempt++) {
        const reply = await this.opts.client.send({
          method: 'POST',
          path: this.path('/prefill'),
          body,
          schema: PrefillAppliedSchema,
        });
        if (reply.ok) {
          const ack = reply.value;
          this.steps.notePrefill(ack.generation_id, ack.attempt_id, ack.work_id);
          return { attemptId: ack.attempt_id, deduplicated: ack.deduplicated };
        }
        // SessionBusy: the service wants pending output drained first; the next poll does that.
        const busy = reply.failure.type === 'SessionBusy' || reply.failure.status === 409;
        if (!busy || attempt >= this.opts.retries) throw this.fail(reply.failure, 'prefill');
        await sleep(this.opts.retryBaseMs * 2 ** attempt);
      }
    });
  }

  async playbackAck(input: { utteranceId: string; playedMs: number; final: boolean }): Promise<void> {
    this.ensureUsable();
    const played = this.steps.playedChunks(input.utteranceId, input.playedMs, this.opts.serviceChunkMs);
    const reply = await this.opts.client.send({
      method: 'POST',
      path: this.path('/playback_ack'),
      body: {
        ...this.ids(),
        utterance_id: input.utteranceId,
        cumulative_played_chunks: played.chunks,
        at_ms: this.clockMs(),
        caused_by_work_id: played.workId,
      },
      schema: PlaybackAcceptedSchema,
    });
    if (!reply.ok) throw this.fail(reply.failure, 'playback_ack');
  }

  async park(input: { planId: string; utteranceId: string; remainder: string }): Promise<void> {
    this.ensureUsable();
    // The official model keeps the conversation in its own KV cache and has no plan store: a parked
    // remainder is remembered here only, for the host's bookkeeping.
    this.parked.set(input.planId, { utteranceId: input.utteranceId, remainder: input.remainder });
    if (this.parked.size > 16) this.parked.delete(this.parked.keys().next().value as string);
  }

  async step(request: StepRequest): Promise<OutputStep> {
    this.ensureUsable();
    const reply = await this.opts.client.send({
      method: 'POST',
      path: this.path('/output'),
      query: { incarnation: this.serviceIncarnation, timeout_s: this.opts.outputTimeoutS },
      schema: ModelOutputStepSchema,
      malformedCode: 'model_step_failed',
      extraTimeoutMs: this.opts.outputTimeoutS * 1000,
    });
    this.ensureUsable();
    if (reply.ok) {
      const inputSeqCutoff = this.hostCutoff(reply.value.input_seq_cutoff);
      // Counters advance only once the step translated, so a bad step leaves them as they were.
      const step = this.steps.translate(reply.value, {
        chunk: request.chunk,
        inputSeqCutoff,
        stepSeq: this.stepSeq + 1,
      });
      this.stepSeq = step.stepSeq;
      this.cutoff = inputSeqCutoff;
      return step;
    }
    if (reply.failure.status === 408)
      return this.steps.noOutput({ chunk: request.chunk, inputSeqCutoff: this.cutoff, stepSeq: ++this.stepSeq });
    throw this.fail(reply.failure, 'output');
  }

  async close(reason: string): Promise<void> {
    if (this.state === 'closed') return;
    const wasOpen = this.state === 'open';
    this.state = 'closed';
    this.opts.onClosed(this);
    if (!wasOpen) return;
    const reply = await this.opts.client.send({
      method: 'DELETE',
      path: `/sessions/${encodeURIComponent(this.sessionId)}`,
      query: { incarnation: this.serviceIncarnation, reason: reason || 'client_close' },
      schema: SessionClosedSchema,
    });
    if (reply.ok) return;
    const err = failureToError(reply.failure, 'close');
    // Already gone or already replaced: the outcome a close wants.
    if (err.code === 'session_closed' || err.code === 'stale_incarnation') return;
    throw err;
  }

  // ---- input fence mapping -------------------------------------------------------------

  private hostCutoff(serviceCutoff: number): number {
    if (serviceCutoff === 0) return this.cutoff;
    const host = this.hostSeqByServiceSeq.get(serviceCutoff) ?? this.cutoff;
    for (const key of this.hostSeqByServiceSeq.keys()) if (key < serviceCutoff) this.hostSeqByServiceSeq.delete(key);
    return host;
  }

  // ---- plumbing ----------------------------------------------------------------------------

  /**
   * Runs one input in the session's serial order. The host's sequence number is checked and
   * reserved at call time; the service's `event_seq` is assigned when the request actually goes out.
   */
  private input(inputSeq: number, send: (eventSeq: number) => Promise<InputAccepted | null>): Promise<InputAck> {
    try {
      this.ensureUsable();
    } catch (err) {
      return Promise.reject(err);
    }
    try {
      this.reserve(inputSeq);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.serialized(async () => {
      this.ensureUsable();
      const accepted = await send(this.eventSeq + 1);
      if (accepted !== null) {
        this.eventSeq += 1;
        this.hostSeqByServiceSeq.set(accepted.input_seq, inputSeq);
      }
      return { inputSeq };
    });
  }

  private reserve(inputSeq: number): void {
    if (!Number.isInteger(inputSeq) || inputSeq <= this.lastInputSeq)
      throw new VenusError('invalid_arguments', `inputSeq ${inputSeq} does not follow ${this.lastInputSeq}`);
    this.lastInputSeq = inputSeq;
  }

  private serialized<T>(task: () => Promise<T>): Promise<T> {
    const run = this.chain.then(task);
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async post(suffix: '/audio' | '/video_frame', body: Record<string, unknown>): Promise<InputAccepted> {
    const reply = await this.opts.client.send({
      method: 'POST',
      path: this.path(suffix),
      body,
      schema: InputAcceptedSchema,
    });
    if (!reply.ok) throw this.fail(reply.failure, suffix.slice(1));
    return reply.value;
  }

  private fail(failure: Parameters<typeof failureToError>[0], what: string): VenusError {
    const err = failureToError(failure, `${what} (${this.sessionId})`);
    if (err.code === 'stale_incarnation') this.supersede();
    return err;
  }

  private ensureUsable(): void {
    if (this.state === 'superseded')
      throw new VenusError(
        'stale_incarnation',
        `session ${this.sessionId} incarnation ${this.incarnation} was replaced by a newer incarnation`,
      );
    if (this.state === 'closed') throw new VenusError('session_closed', `session ${this.sessionId} is closed`);
  }

  private ids(): { session_id: string; incarnation: number } {
    return { session_id: this.sessionId, incarnation: this.serviceIncarnation };
  }

  private path(suffix: string): string {
    return `/sessions/${encodeURIComponent(this.sessionId)}${suffix}`;
  }

  private clockMs(): number {
    return Math.max(0, Date.now() - this.openedAt);
  }
}
