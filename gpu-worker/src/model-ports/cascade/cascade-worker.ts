/**
 * Worker-thread entry that hosts cascade sessions: their voice activity (Silero VAD, batched
 * across sessions), turn-taking, and the requests to the OpenAI-compatible endpoints. Calls on one
 * session run strictly in order; requests run in the background and a step never waits for them.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type ErrorCode, VenusError } from '@venus/protocol';
import { SileroVad } from '../../reference-model/silero-vad.ts';
import { VadBatcher } from '../../reference-model/vad-batcher.ts';
import type { SessionCall } from '../../reference-model/worker-protocol.ts';
import { CascadeDialogue } from './cascade-dialogue.ts';
import type { CascadeToMain, CascadeWorkerData, MainToCascade } from './cascade-worker-protocol.ts';
import { OpenAiEndpoints } from './openai-endpoints.ts';

interface Hosted {
  dialogue: CascadeDialogue;
  chain: Promise<unknown>;
}

const data = workerData as CascadeWorkerData;
const port = parentPort;
if (!port) throw new Error('cascade-worker must run in a worker thread');

const vad = await SileroVad.create({ maxBatch: data.maxBatch, intraOpNumThreads: 1 });
const batcher = new VadBatcher(vad);
const backends = new OpenAiEndpoints(data.config);
const sessions = new Map<number, Hosted>();

function serial<T>(hosted: Hosted, work: () => T | Promise<T>): Promise<T> {
  const result = hosted.chain.then(work);
  hosted.chain = result.catch(() => undefined);
  return result;
}

async function run(hosted: Hosted, handle: number, call: SessionCall): Promise<unknown> {
  const { dialogue } = hosted;
  switch (call.op) {
    case 'step': {
      const plan = dialogue.beginStep(call.request);
      const probabilities = await batcher.score(dialogue.voice.stream, plan.frames);
      return dialogue.finishStep(plan, probabilities);
    }
    case 'prefill':
      return dialogue.prefill(call.request);
    case 'playbackAck':
      dialogue.playbackAck(call.utteranceId, call.playedMs, call.final);
      return null;
    case 'park':
      dialogue.park(call.planId, call.remainder);
      return null;
    case 'cancelResponse':
      dialogue.cancelResponse();
      return null;
    case 'close':
      dialogue.close();
      sessions.delete(handle);
      return null;
  }
}

function reply(id: number, work: Promise<unknown>): void {
  work.then(
    (value) => {
      const message: CascadeToMain = { t: 'reply', id, ok: true, value };
      const audio = (value as { audio?: unknown } | null)?.audio;
      port?.postMessage(message, audio instanceof Int16Array ? [audio.buffer as ArrayBuffer] : []);
    },
    (err: unknown) => {
      const code: ErrorCode = VenusError.isInstance(err) ? err.code : 'model_step_failed';
      const message: CascadeToMain = {
        t: 'reply',
        id,
        ok: false,
        code,
        message: err instanceof Error ? err.message : String(err),
      };
      port?.postMessage(message);
    },
  );
}

port.on('message', (message: MainToCascade) => {
  switch (message.t) {
    case 'shutdown':
      for (const hosted of sessions.values()) hosted.dialogue.close();
      sessions.clear();
      reply(
        message.id,
        vad.close().then(() => null),
      );
      return;
    case 'open': {
      const dialogue = new CascadeDialogue({
        sessionId: message.sessionId,
        incarnation: message.incarnation,
        backends,
        ...(message.voice ? { voice: message.voice } : {}),
        ...(message.instructions ? { instructions: message.instructions } : {}),
        ...(data.config.systemPrompt ? { systemPrompt: data.config.systemPrompt } : {}),
      });
      sessions.set(message.handle, { dialogue, chain: Promise.resolve() });
      reply(message.id, Promise.resolve(null));
      return;
    }
    case 'audio':
      sessions.get(message.handle)?.dialogue.appendAudio(message.inputSeq, message.pcm);
      return;
    case 'text':
      sessions.get(message.handle)?.dialogue.appendText(message.inputSeq, message.text);
      return;
    case 'call': {
      const hosted = sessions.get(message.handle);
      if (!hosted) {
        reply(message.id, Promise.reject(new VenusError('session_closed', `no session with handle ${message.handle}`)));
        return;
      }
      reply(
        message.id,
        serial(hosted, () => run(hosted, message.handle, message.call)),
      );
      return;
    }
  }
});

const ready: CascadeToMain = { t: 'ready' };
port.postMessage(ready);
