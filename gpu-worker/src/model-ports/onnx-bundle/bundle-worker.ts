/**
 * Worker-thread entry that runs an ONNX bundle: its sessions (dialogue state and KV caches) and
 * the batched inference that steps them. Calls on one session run strictly in order; steps of
 * different sessions share batches. Speaks the same message protocol as the reference model's
 * inference worker, so the main thread's session handles work unchanged.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type ErrorCode, type StepRequest, VenusError } from '@venus/protocol';
import type { InferenceToMain, MainToInference, SessionCall } from '../../reference-model/worker-protocol.ts';
import type { BundleDialogue } from './bundle-dialogue.ts';
import { BundleEngine } from './bundle-engine.ts';
import { loadBundle } from './bundle-manifest.ts';
import type { ProviderOptions } from './execution-provider.ts';

export interface BundleWorkerData {
  bundleDir: string;
  provider: ProviderOptions;
  /** Measure the step cost before reporting ready (a replacement thread skips it). */
  calibrate: boolean;
}

/** The first message: what calibration measured (NaN when skipped). */
export interface BundleWorkerReady {
  t: 'ready';
  /** Wall time of one batched chunk step divided by its sessions. */
  stepCostMs: number;
  /** Sessions stepped together while measuring. */
  calibrationSessions: number;
}

interface Hosted {
  dialogue: BundleDialogue;
  chain: Promise<unknown>;
}

const data = workerData as BundleWorkerData;
const port = parentPort;
if (!port) throw new Error('bundle-worker must run in a worker thread');

const engine = await BundleEngine.load(await loadBundle(data.bundleDir), data.provider);
const sessions = new Map<number, Hosted>();

function serial<T>(hosted: Hosted, work: () => T | Promise<T>): Promise<T> {
  const result = hosted.chain.then(work);
  hosted.chain = result.catch(() => undefined);
  return result;
}

async function run(hosted: Hosted, handle: number, call: SessionCall): Promise<unknown> {
  const { dialogue } = hosted;
  switch (call.op) {
    case 'step':
      return engine.step(dialogue, call.request);
    case 'prefill':
      return dialogue.prefill(call.request);
    case 'playbackAck':
      dialogue.playbackAck(call.utteranceId, call.playedMs, call.final);
      return null;
    case 'park':
      // The bundle format has no plan memory yet: parking is acknowledged and has no effect.
      return null;
    case 'cancelResponse':
      dialogue.cancelResponse();
      return null;
    case 'close':
      sessions.delete(handle);
      return null;
  }
}

function reply(id: number, work: Promise<unknown>): void {
  work.then(
    (value) => {
      const message: InferenceToMain = { t: 'reply', id, ok: true, value };
      const audio = (value as { audio?: unknown } | null)?.audio;
      port?.postMessage(message, audio instanceof Int16Array ? [audio.buffer as ArrayBuffer] : []);
    },
    (err: unknown) => {
      const code: ErrorCode = VenusError.isInstance(err) ? err.code : 'model_step_failed';
      const message: InferenceToMain = {
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

port.on('message', (message: MainToInference) => {
  switch (message.t) {
    case 'crash':
      process.exit(1);
      return;
    case 'shutdown':
      sessions.clear();
      reply(
        message.id,
        engine.release().then(() => null),
      );
      return;
    case 'open':
      sessions.set(message.handle, {
        dialogue: engine.openDialogue(message.sessionId, message.incarnation),
        chain: Promise.resolve(),
      });
      reply(message.id, Promise.resolve(null));
      return;
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

const CALIBRATION_SESSIONS = 32;
const CALIBRATION_CHUNK_MS = 160;

/**
 * Cost of one session-step at 160 ms chunks, measured with 32 sessions stepping together (half of
 * them hear speech, or get typed text, first, so they decode whole chunks of tokens), as the host
 * steps them.
 */
async function calibrate(): Promise<number> {
  const dialogues = Array.from({ length: CALIBRATION_SESSIONS }, (_, i) => engine.openDialogue(`calibration-${i}`, 0));
  const samples = CALIBRATION_CHUNK_MS * 16;
  const silence = new Int16Array(samples);
  const speech = new Int16Array(samples);
  let seed = 7;
  for (let i = 0; i < samples; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    speech[i] = (seed % 16_000) - 8000;
  }
  const warmup = 2;
  const rounds = 12;
  let started = 0;
  for (let round = 0; round < warmup + rounds; round++) {
    if (round === warmup) started = performance.now();
    await Promise.all(
      dialogues.map((d, i) => {
        const talk = round === 0 && i % 2 === 0;
        if (engine.audioInput) d.appendAudio(round + 1, talk ? speech : silence);
        else if (talk) d.appendText(round + 1, 'hello');
        const request: StepRequest = {
          chunk: round,
          inputSeqCutoff: round + 1,
          atMs: (round + 1) * CALIBRATION_CHUNK_MS,
          assistantAudible: false,
        };
        return engine.step(d, request);
      }),
    );
  }
  return (performance.now() - started) / (rounds * dialogues.length);
}

const ready: BundleWorkerReady = {
  t: 'ready',
  stepCostMs: data.calibrate ? await calibrate() : Number.NaN,
  calibrationSessions: CALIBRATION_SESSIONS,
};
port.postMessage(ready);
