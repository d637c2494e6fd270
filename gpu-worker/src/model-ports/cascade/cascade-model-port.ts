import type { ModelCapabilities, OpenSessionRequest } from '@venus/protocol';
import { TEXT_SPECIAL_TOKENS } from '../../reference-model/special-tokens.ts';
import type { OpenMessage, SessionThreadMessage } from '../../threaded-port/thread-protocol.ts';
import {
  type SessionThreadPool,
  ThreadedModelPort,
  threadedCapabilities,
} from '../../threaded-port/threaded-model-port.ts';
import { startWorker, WorkerLink } from '../../threaded-port/worker-link.ts';
import { type CascadeConfig, cascadeConfigFromEnv } from './cascade-config.ts';
import type { CascadeOpen, CascadeWorkerData } from './cascade-worker.ts';

export const CASCADE_MODEL_REVISION = 'cascade-v1';

/**
 * A model port for users without Venus weights: a cascade of OpenAI-compatible endpoints
 * (speech-to-text, a streaming chat model, text-to-speech) behind our own VAD and turn-taking
 * (Silero VAD and the reference model's overlap rules, in worker threads; a crashed thread is
 * replaced like any threaded port's). The chat model is taught the delegate protocol by its system
 * prompt, so delegation, `<backend>` results, barge-in and "context keeps only what was heard" work
 * as with the Venus model, at cascade latency. Configure it with `cascadeConfigFromEnv()`
 * (`VENUS_CASCADE_*`).
 *
 * @example
 *   const port = await CascadeModelPort.create(cascadeConfigFromEnv({ VENUS_CASCADE_BASE_URL: 'http://localhost:8000/v1' }));
 *   const s = await port.openSession({ sessionId: 's1', incarnation: 0 });
 *   await s.appendText({ inputSeq: 1, itemId: 'i1', text: "what's the weather in Paris" });
 *   const out = await s.step({ chunk: 0, inputSeqCutoff: 1, atMs: 160, assistantAudible: false });
 *   await port.close();
 */
export class CascadeModelPort extends ThreadedModelPort<CascadeOpen> {
  private constructor(
    pool: SessionThreadPool<CascadeOpen>,
    readonly config: CascadeConfig,
  ) {
    super(pool, { modelName: 'the cascade model', maxSessions: config.maxSessions, takesResponseInstructions: true });
  }

  static async create(config: CascadeConfig): Promise<CascadeModelPort> {
    const data: CascadeWorkerData = { config, maxBatch: 64 };
    const pool = await ThreadedModelPort.startPool<CascadeOpen>(config.threads, async () => {
      const started = await startWorker(new URL('./cascade-worker.ts', import.meta.url), data);
      return new WorkerLink<SessionThreadMessage<CascadeOpen>>(started.worker);
    });
    return new CascadeModelPort(pool, config);
  }

  /** A port configured from `VENUS_CASCADE_*` environment variables. */
  static fromEnv(env: Record<string, string | undefined> = process.env): Promise<CascadeModelPort> {
    return CascadeModelPort.create(cascadeConfigFromEnv(env));
  }

  async capabilities(): Promise<ModelCapabilities> {
    const { transcription, chat, speech } = this.config;
    return threadedCapabilities({
      model: `cascade:${chat.model}`,
      modelRevision: `${CASCADE_MODEL_REVISION} (${transcription.model} + ${chat.model} + ${speech.model})`,
      specialTokens: { ...TEXT_SPECIAL_TOKENS },
      maxSessions: this.config.maxSessions,
    });
  }

  protected openFields(request: OpenSessionRequest): Omit<CascadeOpen, keyof OpenMessage> {
    return {
      ...(request.voice ? { voice: request.voice } : {}),
      ...(request.instructions ? { instructions: request.instructions } : {}),
    };
  }
}
