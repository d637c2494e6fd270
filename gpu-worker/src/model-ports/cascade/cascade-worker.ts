/**
 * Worker-thread entry that hosts cascade sessions: their voice activity (Silero VAD, batched
 * across sessions), turn-taking, and the requests to the OpenAI-compatible endpoints. Calls on one
 * session run strictly in order; requests run in the background and a step never waits for them.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { StepRequest } from '@venus/protocol';
import { SileroVad } from '../../reference-model/silero-vad.ts';
import { ThreadSessions } from '../../reference-model/thread-sessions.ts';
import { VadBatcher } from '../../reference-model/vad-batcher.ts';
import { CascadeDialogue } from './cascade-dialogue.ts';
import type { CascadeToMain, CascadeWorkerData, MainToCascade } from './cascade-worker-protocol.ts';
import { OpenAiEndpoints } from './openai-endpoints.ts';

const data = workerData as CascadeWorkerData;
const port = parentPort;
if (!port) throw new Error('cascade-worker must run in a worker thread');

const vad = await SileroVad.create({ maxBatch: data.maxBatch, intraOpNumThreads: 1 });
const batcher = new VadBatcher(vad);
const backends = new OpenAiEndpoints(data.config);
async function step(dialogue: CascadeDialogue, request: StepRequest) {
  const plan = dialogue.beginStep(request);
  const probabilities = await batcher.score(dialogue.voice.stream, plan.frames);
  return dialogue.finishStep(plan, probabilities);
}

const sessions = new ThreadSessions<CascadeDialogue>(port, step);

sessions.serve<Extract<MainToCascade, { t: 'open' }>>(
  port,
  (message) =>
    new CascadeDialogue({
      sessionId: message.sessionId,
      incarnation: message.incarnation,
      backends,
      ...(message.voice ? { voice: message.voice } : {}),
      ...(message.instructions ? { instructions: message.instructions } : {}),
      ...(data.config.systemPrompt ? { systemPrompt: data.config.systemPrompt } : {}),
    }),
  () => vad.close(),
);

const ready: CascadeToMain = { t: 'ready' };
port.postMessage(ready);
