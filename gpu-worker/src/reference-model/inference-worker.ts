/**
 * Worker-thread entry that hosts reference-model sessions: their dialogue state, voice activity
 * and speech queues. Steps of different sessions share batched VAD runs; calls on one session run
 * strictly in order. Speech is requested from the TTS threads and never awaited by a step.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { serveDuplexDialogues } from '../duplex-dialogue/serve-duplex-dialogues.ts';
import { SessionRecognisers } from '../perception/pocketsphinx/session-recognisers.ts';
import { DialogueSession, type Synthesize } from './dialogue-session.ts';
import { TtsClient } from './tts-client.ts';
import type { InferenceToMain, InferenceWorkerData, ReferenceOpen } from './worker-protocol.ts';

const data = workerData as InferenceWorkerData;
const port = parentPort;
if (!port) throw new Error('inference-worker must run in a worker thread');

const tts = new TtsClient(data.ttsPorts);
const synthesize: Synthesize = (text, voice) => tts.synthesize(text, voice);
// One recogniser thread per inference thread, started at the first speech of any of its sessions.
const recognisers = data.recognition ? new SessionRecognisers(data.recognition) : null;
const step = await serveDuplexDialogues(
  port,
  data.maxBatch,
  (message: ReferenceOpen) =>
    new DialogueSession({
      sessionId: message.sessionId,
      incarnation: message.incarnation,
      voice: message.voice,
      synthesize,
      ...(message.history ? { history: message.history } : {}),
      ...(message.parked ? { parked: message.parked } : {}),
      ...(recognisers ? { recognise: () => recognisers.open(message.phrases ?? []) } : {}),
    }),
  () => recognisers?.close(),
);

/**
 * Cost of one session-step at 160 ms chunks (160 ms of audio through the VAD, the dialogue logic),
 * measured with 16 calibration sessions stepping together as the host steps them: the basis of
 * the capacity the port advertises.
 */
async function calibrate(): Promise<number> {
  const silent: Synthesize = async () => new Int16Array(0);
  const dialogues = Array.from(
    { length: 16 },
    (_, i) => new DialogueSession({ sessionId: `calibration-${i}`, incarnation: 0, synthesize: silent }),
  );
  const pcm = new Int16Array(2560);
  let seed = 1;
  for (let i = 0; i < pcm.length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    pcm[i] = (seed % 2000) - 1000;
  }
  const rounds = 12;
  let started = 0;
  for (let round = 0; round < rounds + 3; round++) {
    if (round === 3) started = performance.now();
    await Promise.all(
      dialogues.map((d) => {
        d.appendAudio(round + 1, pcm);
        return step(d, { chunk: round, inputSeqCutoff: round + 1, atMs: (round + 1) * 160, assistantAudible: false });
      }),
    );
  }
  return (performance.now() - started) / (rounds * dialogues.length);
}

const ready: InferenceToMain = { t: 'ready', stepCostMs: data.calibrate === false ? Number.NaN : await calibrate() };
port.postMessage(ready);
