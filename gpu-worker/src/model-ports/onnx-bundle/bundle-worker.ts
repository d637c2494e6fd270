/**
 * Worker-thread entry that runs an ONNX bundle: its sessions (dialogue state and KV caches) and
 * the batched inference that steps them. Calls on one session run strictly in order; steps of
 * different sessions share batches. Speaks the same message protocol as the reference model's
 * inference worker, so the main thread's session handles work unchanged.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { StepRequest } from '@venus/protocol';
import type { OpenMessage } from '../../threaded-port/thread-protocol.ts';
import { ThreadSessions } from '../../threaded-port/thread-sessions.ts';
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

const data = workerData as BundleWorkerData;
const port = parentPort;
if (!port) throw new Error('bundle-worker must run in a worker thread');

const engine = await BundleEngine.load(await loadBundle(data.bundleDir), data.provider);
const sessions = new ThreadSessions<BundleDialogue>(port, (dialogue, request) => engine.step(dialogue, request));

sessions.serve<OpenMessage>(
  port,
  (message) => engine.openDialogue(message.sessionId, message.incarnation),
  () => engine.release(),
);

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
