/**
 * Worker-thread entry that hosts cascade sessions: their voice activity (Silero VAD, batched
 * across sessions), turn-taking, and the requests to the OpenAI-compatible endpoints. Calls on one
 * session run strictly in order; requests run in the background and a step never waits for them.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { serveDuplexDialogues } from '../../duplex-dialogue/serve-duplex-dialogues.ts';
import type { OpenMessage } from '../../threaded-port/thread-protocol.ts';
import type { CascadeConfig } from './cascade-config.ts';
import { CascadeDialogue } from './cascade-dialogue.ts';
import { OpenAiEndpoints } from './openai-endpoints.ts';

/** A cascade session opens with the client's voice and instructions (they go into its system prompt). */
export type CascadeOpen = OpenMessage & { voice?: string; instructions?: string };

export interface CascadeWorkerData {
  config: CascadeConfig;
  maxBatch: number;
}

const data = workerData as CascadeWorkerData;
const port = parentPort;
if (!port) throw new Error('cascade-worker must run in a worker thread');

const backends = new OpenAiEndpoints(data.config);
await serveDuplexDialogues(
  port,
  data.maxBatch,
  (message: CascadeOpen) =>
    new CascadeDialogue({
      sessionId: message.sessionId,
      incarnation: message.incarnation,
      backends,
      ...(message.voice ? { voice: message.voice } : {}),
      ...(message.instructions ? { instructions: message.instructions } : {}),
      ...(data.config.systemPrompt ? { systemPrompt: data.config.systemPrompt } : {}),
    }),
);

port.postMessage({ t: 'ready' });
