/**
 * Worker-thread entry for speech synthesis: one EspeakTts per thread, serving requests from the
 * inference workers over the message ports it is given (at start or later, one per inference
 * thread), so a synthesis never runs on a thread that steps sessions. Reports its measured time for a typical sentence when ready.
 */
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { EspeakTts } from './espeak-tts.ts';
import type { TtsControl, TtsRequest, TtsResponse, TtsToMain, TtsWorkerData } from './worker-protocol.ts';

const data = workerData as TtsWorkerData;
const tts = await EspeakTts.create();

// The first runs still compile hot paths; the best of a few runs is the steady cost.
let synthMs = Number.POSITIVE_INFINITY;
for (const city of ['Paris', 'Rome', 'Lima', 'Oslo']) {
  const started = performance.now();
  await tts.synthesize(`Let me check the weather in ${city}. It may take a few seconds, so bear with me.`);
  synthMs = Math.min(synthMs, performance.now() - started);
}

function serve(port: MessagePort): void {
  port.on('message', (request: TtsRequest) => {
    tts.synthesize(request.text, request.voice).then(
      (pcm) => {
        const reply: TtsResponse = { t: 'audio', id: request.id, pcm };
        port.postMessage(reply, [pcm.buffer as ArrayBuffer]);
      },
      (err: unknown) => {
        const reply: TtsResponse = {
          t: 'error',
          id: request.id,
          message: err instanceof Error ? err.message : String(err),
        };
        port.postMessage(reply);
      },
    );
  });
}

for (const port of data.ports) serve(port);
// Ports for inference threads started later (replacements of crashed ones) arrive as messages.
parentPort?.on('message', (message: TtsControl) => {
  if (message.t === 'port') serve(message.port);
});

const ready: TtsToMain = { t: 'ready', synthMs };
parentPort?.postMessage(ready);
