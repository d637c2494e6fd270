import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEMO_GRAMMAR, PocketSphinxRecogniser } from '@venus/gpu-worker';
import { speechClip } from '../test/support/speech-clip.ts';

const SENTENCES = [
  'what is the weather in Paris',
  'actually make it London',
  'what time is it in Tokyo',
  'never mind',
  'the quick brown fox jumps over the lazy dog',
];

/**
 * The recogniser's cost: eSpeak NG clips (the espeak-ng and sox binaries) streamed in 20 ms frames
 * through one PocketSphinx stream, as fast as the thread decodes them; the thread's busy time per
 * second of audio is the CPU one session's hearing costs.
 */
export async function runRecogniserCost(opts: { rounds: number }) {
  const dir = mkdtempSync(path.join(tmpdir(), 'venus-bench-recogniser-'));
  const clips = SENTENCES.map((text) => speechClip(dir, text));
  rmSync(dir, { recursive: true, force: true });
  const started = performance.now();
  const recogniser = await PocketSphinxRecogniser.start({ maxBacklogMs: 600_000 });
  const loadMs = performance.now() - started;
  const stream = await recogniser.open({ grammar: DEMO_GRAMMAR });
  const rss0 = process.memoryUsage().rss;
  const busy0 = recogniser.busyMs();
  let audioMs = 0;
  let finals = 0;
  const done = (async () => {
    for await (const e of stream.events) if (e.type === 'final' && ++finals === opts.rounds * clips.length) return;
  })();
  for (let r = 0; r < opts.rounds; r++) {
    for (const pcm of clips) {
      for (let at = 0; at < pcm.length; at += 320) stream.push(pcm.subarray(at, at + 320));
      stream.endUtterance();
      audioMs += pcm.length / 16;
    }
  }
  await done;
  const busyMs = recogniser.busyMs() - busy0;
  const rssMb = (process.memoryUsage().rss - rss0) / 2 ** 20;
  await stream.close();
  await recogniser.close();
  return { audioS: audioMs / 1000, cpuMsPerAudioS: busyMs / (audioMs / 1000), loadMs, rssMbAfterOpen: rssMb };
}
