import { type ModelCapabilities, type ModelPort, type OpenSessionRequest, VenusError } from '@venus/protocol';
import { PortSessions } from '../../reference-model/port-sessions.ts';
import type { ReferenceModelSession, SessionOwner } from '../../reference-model/reference-model-session.ts';
import { TEXT_SPECIAL_TOKENS } from '../../reference-model/special-tokens.ts';
import { closeThreads, startWorker, WorkerLink } from '../../reference-model/worker-link.ts';
import { type CascadeConfig, cascadeConfigFromEnv } from './cascade-config.ts';
import type { CascadeToMain, CascadeWorkerData, MainToCascade } from './cascade-worker-protocol.ts';

export const CASCADE_MODEL_REVISION = 'cascade-v1';

/**
 * A model port for users without Venus weights: a cascade of OpenAI-compatible endpoints
 * (speech-to-text, a streaming chat model, text-to-speech) behind our own VAD and turn-taking
 * (Silero VAD and the reference model's overlap rules, in worker threads). The chat model is
 * taught the delegate protocol by its system prompt, so delegation, `<backend>` results,
 * barge-in and "context keeps only what was heard" work as with the Venus model, at cascade
 * latency. Configure it with `cascadeConfigFromEnv()` (`VENUS_CASCADE_*`).
 *
 * @example
 *   const port = await CascadeModelPort.create(cascadeConfigFromEnv({ VENUS_CASCADE_BASE_URL: 'http://localhost:8000/v1' }));
 *   const s = await port.openSession({ sessionId: 's1', incarnation: 0 });
 *   await s.appendText({ inputSeq: 1, itemId: 'i1', text: "what's the weather in Paris" });
 *   const out = await s.step({ chunk: 0, inputSeqCutoff: 1, atMs: 160, assistantAudible: false });
 *   await port.close();
 */
export class CascadeModelPort implements ModelPort, SessionOwner {
  readonly modelName = 'the cascade model';
  private readonly sessions = new PortSessions();
  private nextLink = 0;
  private isClosed = false;

  private constructor(
    private readonly links: WorkerLink<MainToCascade>[],
    readonly config: CascadeConfig,
  ) {}

  static async create(config: CascadeConfig): Promise<CascadeModelPort> {
    const data: CascadeWorkerData = { config, maxBatch: 64 };
    const started = await Promise.allSettled(
      Array.from({ length: Math.max(1, Math.floor(config.threads)) }, () =>
        startWorker<CascadeToMain>(new URL('./cascade-worker.ts', import.meta.url), data),
      ),
    );
    const workers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value.worker] : []));
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) {
      await Promise.all(workers.map((w) => w.terminate()));
      throw failed.reason;
    }
    return new CascadeModelPort(
      workers.map((w) => new WorkerLink<MainToCascade>(w)),
      config,
    );
  }

  /** A port configured from `VENUS_CASCADE_*` environment variables. */
  static fromEnv(env: Record<string, string | undefined> = process.env): Promise<CascadeModelPort> {
    return CascadeModelPort.create(cascadeConfigFromEnv(env));
  }

  get closed(): boolean {
    return this.isClosed;
  }

  async capabilities(): Promise<ModelCapabilities> {
    const { transcription, chat, speech } = this.config;
    return {
      model: `cascade:${chat.model}`,
      modelRevision: `${CASCADE_MODEL_REVISION} (${transcription.model} + ${chat.model} + ${speech.model})`,
      specialTokens: { ...TEXT_SPECIAL_TOKENS },
      maxSessions: this.config.maxSessions,
      audioInput: true,
      videoInput: false,
      textInput: true,
      // Steps carry speech: the host needs no synthesiser of its own.
      nativeAudioOutput: true,
      inputSampleRateHz: 16_000,
      outputSampleRateHz: 24_000,
    };
  }

  async openSession(request: OpenSessionRequest): Promise<ReferenceModelSession> {
    if (this.isClosed) throw new VenusError('model_unavailable', 'the cascade model port is closed');
    const capacity = { maxSessions: this.config.maxSessions, open: this.openCount(), name: 'the cascade model' };
    return this.sessions.open(request, capacity, this, async (handle) => {
      const link = this.pickLink();
      await link.call({
        t: 'open',
        id: link.nextId(),
        handle,
        sessionId: request.sessionId,
        incarnation: request.incarnation,
        ...(request.voice ? { voice: request.voice } : {}),
        ...(request.instructions ? { instructions: request.instructions } : {}),
      });
      return link;
    });
  }

  released(session: ReferenceModelSession): void {
    this.sessions.released(session);
  }

  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    await closeThreads(this.links, 'the cascade model port is closed');
    this.sessions.clear();
  }

  private openCount(): number {
    return this.links.reduce((n, l) => n + l.sessions, 0);
  }

  private pickLink(): WorkerLink<MainToCascade> {
    const alive = this.links.filter((l) => l.alive);
    if (alive.length === 0) throw new VenusError('model_unavailable', 'no cascade worker is running');
    const link = alive[this.nextLink % alive.length]!;
    this.nextLink += 1;
    return link;
  }
}
