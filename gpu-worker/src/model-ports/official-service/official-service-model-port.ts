import { randomUUID } from 'node:crypto';
import type { ModelCapabilities, ModelPort, OpenSessionRequest } from '@venus/protocol';
import { VenusError } from '@venus/protocol';
import { OfficialServiceSession } from './official-service-session.ts';
import { failureToError, ServiceClient } from './service-client.ts';
import { CheckpointTokenizer } from './token-decoder.ts';
import {
  type Health,
  HealthSchema,
  PROTOCOL_VERSION,
  SessionClosedSchema,
  type SessionOpened,
  SessionOpenedSchema,
  VENUS_PROTOCOL_TOKENS,
} from './wire-schemas.ts';

export interface OfficialServiceOptions {
  /** Root of the model service, e.g. `http://gpu-node:8031`. */
  baseUrl: string;
  /** The served checkpoint's `tokenizer.json`; a sibling `tokenizer_config.json` is read when present. */
  tokenizerPath: string;
  fetch?: typeof fetch;
  /** Long-poll window of one output step, in seconds. Default 2. */
  outputTimeoutS?: number;
  /** Extra attempts after 5xx answers, refused connections and deferred prefills. Default 2. */
  retries?: number;
  /** Per-request timeout, in ms, on top of the long-poll window for output steps. Default 10 000. */
  requestTimeoutMs?: number;
  /** First retry backoff in ms; doubles each time. Default 100. */
  retryBaseMs?: number;
  /** `model` sent when opening a session. Default `Realtime-Venus-Omni`. */
  model?: string;
  /** Length of one service chunk of speech, for playback acknowledgements without chunk records. Default 1000. */
  serviceChunkMs?: number;
  /** Whether the served checkpoint takes camera frames. Default: unless the model name says Audio. */
  videoInput?: boolean;
}

const TOKEN_KEYS: Record<string, string> = {
  '<|speak|>': 'speak',
  '<|listen|>': 'listen',
  '<|turn_eos|>': 'turnEos',
  '<|chunk_eos|>': 'chunkEos',
  '<unit>': 'unitOpen',
  '</unit>': 'unitClose',
  '<image>': 'imageOpen',
  '</image>': 'imageClose',
  '<delegate>': 'delegateOpen',
  '</delegate>': 'delegateClose',
  '<backend>': 'backendOpen',
  '</backend>': 'backendClose',
};

/**
 * ModelPort over the official Realtime-Venus model HTTP service (one per GPU, `max_sessions` 1 in
 * the release's demo server). Raw token ids are decoded locally with the checkpoint's tokenizer.
 *
 * Host incarnations fence the service's own: opening a session again with a higher incarnation
 * closes the older one on the service (here, or, after a worker failover, the one the service
 * reports in `/healthz`) and fences every later call on the old ModelSession with
 * `stale_incarnation`.
 *
 * @example
 *   const port = new OfficialServiceModelPort({ baseUrl: 'http://gpu-1:8031', tokenizerPath: '/models/Realtime-Venus-Omni/tokenizer.json' });
 *   const { maxSessions } = await port.capabilities(); // 1 with the demo server
 *   const session = await port.openSession({ sessionId: 's1', incarnation: 0 });
 */
export class OfficialServiceModelPort implements ModelPort {
  private readonly opts: Required<Omit<OfficialServiceOptions, 'fetch' | 'videoInput'>> & {
    videoInput: boolean | undefined;
  };
  private readonly client: ServiceClient;
  private tokenizer: Promise<CheckpointTokenizer> | null = null;
  private lastOpened: SessionOpened | null = null;
  private readonly sessions = new Map<string, OfficialServiceSession>();
  private readonly latestIncarnation = new Map<string, number>();
  private closed = false;

  constructor(options: OfficialServiceOptions) {
    this.opts = {
      baseUrl: options.baseUrl,
      tokenizerPath: options.tokenizerPath,
      outputTimeoutS: options.outputTimeoutS ?? 2,
      retries: options.retries ?? 2,
      requestTimeoutMs: options.requestTimeoutMs ?? 10_000,
      retryBaseMs: options.retryBaseMs ?? 100,
      model: options.model ?? 'Realtime-Venus-Omni',
      serviceChunkMs: options.serviceChunkMs ?? 1000,
      videoInput: options.videoInput,
    };
    this.client = new ServiceClient({
      baseUrl: options.baseUrl,
      fetch: options.fetch,
      retries: this.opts.retries,
      requestTimeoutMs: this.opts.requestTimeoutMs,
      retryBaseMs: this.opts.retryBaseMs,
    });
  }

  async capabilities(): Promise<ModelCapabilities> {
    const health = await this.health();
    const opened = this.lastOpened ?? (await this.probe());
    const tokenizer = await this.loadTokenizer();
    const specialTokens: Record<string, string> = {};
    for (const token of VENUS_PROTOCOL_TOKENS) {
      const known = opened ? token in opened.capabilities.special_token_ids : tokenizer.idOf(token) !== undefined;
      const key = TOKEN_KEYS[token];
      if (known && key) specialTokens[key] = token;
    }
    const model = opened?.model ?? this.opts.model;
    return {
      model,
      modelRevision: opened?.model_revision ?? health.model_revision ?? 'unknown',
      specialTokens,
      // Without a probe (every slot busy) the release's documented value is the honest guess.
      maxSessions: opened?.capabilities.max_sessions ?? 1,
      audioInput: opened?.capabilities.duplex_media ?? true,
      videoInput: this.opts.videoInput ?? !/audio/i.test(model),
      textInput: false,
      nativeAudioOutput: opened?.capabilities.native_audio_output ?? true,
      inputSampleRateHz: 16_000,
      outputSampleRateHz: 24_000,
    };
  }

  async openSession(request: OpenSessionRequest): Promise<OfficialServiceSession> {
    if (this.closed) throw new VenusError('model_unavailable', 'the model port is closed', { retryable: false });
    const { sessionId, incarnation } = request;
    const known = this.latestIncarnation.get(sessionId);
    if (known !== undefined && incarnation <= known)
      throw new VenusError(
        'stale_incarnation',
        `session ${sessionId} is already at incarnation ${known}; ${incarnation} is stale`,
      );
    this.latestIncarnation.set(sessionId, incarnation);
    try {
      const tokenizer = await this.loadTokenizer();
      const previous = this.sessions.get(sessionId);
      if (previous?.isOpen) {
        previous.supersede();
        await this.deleteQuietly(sessionId, previous.serviceIncarnation, 'superseded');
      }
      const opened = await this.openOnService(sessionId);
      this.checkCapabilities(opened, tokenizer);
      this.lastOpened = opened;
      const session = new OfficialServiceSession({
        client: this.client,
        tokenizer,
        opened,
        incarnation,
        outputTimeoutS: this.opts.outputTimeoutS,
        serviceChunkMs: this.opts.serviceChunkMs,
        retries: this.opts.retries,
        retryBaseMs: this.opts.retryBaseMs,
        onClosed: (s) => {
          if (this.sessions.get(s.sessionId) === s) this.sessions.delete(s.sessionId);
        },
      });
      this.sessions.set(sessionId, session);
      return session;
    } catch (err) {
      if (this.latestIncarnation.get(sessionId) === incarnation) {
        if (known === undefined) this.latestIncarnation.delete(sessionId);
        else this.latestIncarnation.set(sessionId, known);
      }
      throw err;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const open = [...this.sessions.values()];
    await Promise.allSettled(open.map((s) => s.close('port_closed')));
  }

  // ---- service calls -----------------------------------------------------------------------

  private async health(): Promise<Health> {
    const reply = await this.client.send({ method: 'GET', path: '/healthz', schema: HealthSchema });
    // A loading service answers 503 {"ready": false}.
    if (!reply.ok || !reply.value.ready)
      throw new VenusError('model_unavailable', `model service at ${this.opts.baseUrl} is not ready`, {
        retryable: true,
        cause: reply.ok ? reply.value : reply.failure,
      });
    return reply.value;
  }

  /**
   * Opens a session. The demo server holds one session and answers SessionBusy while it does; if
   * the holder is this same session id (an older incarnation whose worker went away), it is closed
   * and the open tried once more, since the caller's newer incarnation already owns the session.
   */
  private async openOnService(sessionId: string): Promise<SessionOpened> {
    const body = { session_id: sessionId, model: this.opts.model, protocol_version: PROTOCOL_VERSION };
    const attempt = () => this.client.send({ method: 'POST', path: '/sessions', body, schema: SessionOpenedSchema });
    let reply = await attempt();
    if (!reply.ok && (reply.failure.type === 'SessionBusy' || reply.failure.status === 409)) {
      const health = await this.health();
      const holders = [...(health.sessions ?? []), ...(health.session ? [health.session] : [])];
      const holder = holders.find((s) => s.session_id === sessionId && !s.closed);
      if (holder) {
        await this.deleteQuietly(sessionId, holder.incarnation, 'superseded');
        reply = await attempt();
      }
    }
    if (reply.ok) return reply.value;
    const err = failureToError(reply.failure, `open ${sessionId}`);
    if (err.code === 'model_unavailable' && (reply.failure.type === 'SessionBusy' || reply.failure.status === 409))
      throw new VenusError('model_unavailable', `model service is full: ${reply.failure.message}`, {
        retryable: true,
        cause: reply.failure,
      });
    throw err;
  }

  /** Opens and closes a throwaway session to learn what the service offers; null when it is full. */
  private async probe(): Promise<SessionOpened | null> {
    const sessionId = `capability-probe-${randomUUID()}`;
    const body = { session_id: sessionId, model: this.opts.model, protocol_version: PROTOCOL_VERSION };
    const reply = await this.client.send({ method: 'POST', path: '/sessions', body, schema: SessionOpenedSchema });
    if (!reply.ok) {
      if (reply.failure.type === 'SessionBusy' || reply.failure.status === 409) return null;
      throw failureToError(reply.failure, 'capability probe');
    }
    await this.deleteQuietly(sessionId, reply.value.incarnation, 'capability_probe');
    this.lastOpened = reply.value;
    return reply.value;
  }

  private async deleteQuietly(sessionId: string, serviceIncarnation: number, reason: string): Promise<void> {
    try {
      await this.client.send({
        method: 'DELETE',
        path: `/sessions/${encodeURIComponent(sessionId)}`,
        query: { incarnation: serviceIncarnation, reason },
        schema: SessionClosedSchema,
      });
    } catch {
      // Best effort: the open that follows reports what matters.
    }
  }

  /** The harness's hard requirements; a session that misses one is closed again and refused. */
  private checkCapabilities(opened: SessionOpened, tokenizer: CheckpointTokenizer): void {
    const caps = opened.capabilities;
    const problems: string[] = [];
    if (caps.raw_token_mode !== 'delta') problems.push(`raw_token_mode is "${caps.raw_token_mode}", not "delta"`);
    for (const flag of ['same_kv_prefill', 'duplex_media', 'ordered_input_fence', 'native_audio_output'] as const)
      if (caps[flag] !== true) problems.push(`${flag} is false`);
    const ids = caps.special_token_ids;
    for (const token of VENUS_PROTOCOL_TOKENS) {
      const served = ids[token];
      if (served === undefined) problems.push(`special_token_ids lacks ${token}`);
      else if (tokenizer.idOf(token) !== served)
        problems.push(
          `${token} is ${served} on the service but ${tokenizer.idOf(token)} in ${this.opts.tokenizerPath}`,
        );
    }
    if (new Set(Object.values(ids)).size !== Object.keys(ids).length) problems.push('special_token_ids are not unique');
    if (problems.length === 0) return;
    void this.deleteQuietly(opened.session_id, opened.incarnation, 'incompatible');
    throw new VenusError('model_unavailable', `model service session is unusable: ${problems.join('; ')}`, {
      retryable: false,
    });
  }

  private loadTokenizer(): Promise<CheckpointTokenizer> {
    this.tokenizer ??= CheckpointTokenizer.load(this.opts.tokenizerPath).catch((err: unknown) => {
      this.tokenizer = null;
      throw err;
    });
    return this.tokenizer;
  }
}
