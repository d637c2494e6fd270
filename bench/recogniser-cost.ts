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
 * second of audio is the CPU one session's hearing costs (the thread's own CPU time; its busy
 * time is printed too, which on a loaded machine also counts the time the thread waited for a core).
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
  const cpu0 = await recogniser.cpuMs();
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
  const cpuMs = (await recogniser.cpuMs()) - cpu0;
  const rssMb = (process.memoryUsage().rss - rss0) / 2 ** 20;
  await stream.close();
  await recogniser.close();
  const audioS = audioMs / 1000;
  return { audioS, cpuMsPerAudioS: cpuMs / audioS, busyMsPerAudioS: busyMs / audioS, loadMs, rssMbAfterOpen: rssMb };
}

/**
 * Many sessions at once in real time, as the reference model feeds them: `streams` streams on one
 * recogniser thread, each sent its speech in 160 ms chunks on a 160 ms timer (a clip, then 1 s in
 * which nothing is sent, as between the VAD's speech stretches), for `seconds`. The thread's CPU
 * time per wall second gives the sessions one core carries at this speech share; a final that comes back later
 * than one chunk after its utterance ended counts as a missed deadline.
 */
export async function runRecogniserRealtime(opts: { streams: number; seconds: number }) {
  const dir = mkdtempSync(path.join(tmpdir(), 'venus-bench-recogniser-'));
  const clips = SENTENCES.map((text) => speechClip(dir, text));
  rmSync(dir, { recursive: true, force: true });
  const recogniser = await PocketSphinxRecogniser.start({ maxStreams: opts.streams, maxBacklogMs: 60_000 });
  const streams = await Promise.all(
    Array.from({ length: opts.streams }, () => recogniser.open({ grammar: DEMO_GRAMMAR })),
  );
  const CHUNK = 2560;
  const latencies: number[] = [];
  let speechMs = 0;
  const cpu0 = await recogniser.cpuMs();
  const started = performance.now();
  const endAt = started + opts.seconds * 1000;
  await Promise.all(
    streams.map(async (stream, i) => {
      const ended: number[] = [];
      const listening = (async () => {
        for await (const e of stream.events) if (e.type === 'final') latencies.push(performance.now() - ended.shift()!);
      })();
      let clip = i % clips.length;
      // Streams start spread over one chunk, as sessions' steps are.
      await new Promise((r) => setTimeout(r, (i * 160) / opts.streams));
      while (performance.now() < endAt) {
        const pcm = clips[clip]!;
        for (let at = 0; at < pcm.length; at += CHUNK) {
          stream.push(pcm.subarray(at, at + CHUNK));
          await new Promise((r) => setTimeout(r, 160));
        }
        speechMs += pcm.length / 16;
        ended.push(performance.now());
        stream.endUtterance();
        await new Promise((r) => setTimeout(r, 1000));
        clip = (clip + 1) % clips.length;
      }
      await stream.close();
      await listening;
    }),
  );
  const wallMs = performance.now() - started;
  const cpuMs = (await recogniser.cpuMs()) - cpu0;
  const cpuFraction = cpuMs / wallMs;
  await recogniser.close();
  latencies.sort((a, b) => a - b);
  return {
    streams: opts.streams,
    speechS: speechMs / 1000,
    speechShare: speechMs / (opts.streams * wallMs),
    cpuFraction,
    cpuMsPerSpeechS: cpuMs / (speechMs / 1000),
    sessionsPerCore: opts.streams / Math.max(cpuFraction, 1e-6),
    finalP50Ms: latencies[Math.floor(latencies.length / 2)] ?? Number.NaN,
    finalP95Ms: latencies[Math.floor(latencies.length * 0.95)] ?? Number.NaN,
    missed: latencies.filter((ms) => ms > 160).length,
    finals: latencies.length,
  };
}
