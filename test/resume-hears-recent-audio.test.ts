import { EspeakTts } from '@venus/gpu-worker';
import type { TimelineEvent } from '@venus/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RealtimeClient } from '../embedded/demo/realtime-client.ts';
import { RedisTimelineStore } from '../gpu-worker/src/timeline/index.ts';
import { type FleetCluster, relaySessions, startFleetCluster } from './support/fleet-cluster.ts';
import { testRedisUrl } from './support/redis.ts';
import { until } from './support/until.ts';

/** 100 ms frames of 24 kHz PCM16, as an OpenAI Realtime client appends them. */
function appendFrames(c: RealtimeClient, pcm24k: Int16Array): void {
  for (let at = 0; at < pcm24k.length; at += 2_400) {
    const frame = pcm24k.subarray(at, Math.min(at + 2_400, pcm24k.length));
    c.send({
      type: 'input_audio_buffer.append',
      audio: Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength).toString('base64'),
    });
  }
}

/**
 * Regression (issue 14, "the recent audio window is not fed back into the new model context"): a
 * user halfway through a spoken request when their session moved to another worker lost its first
 * half; the new worker heard only the rest. Now the new incarnation's model hears again the
 * microphone input stored since the last recognised utterance (RECENT_AUDIO_WINDOW_MS of it), so the
 * request is recognised whole and answered.
 *
 * An edge, two GPU workers and a harness as real processes on real Redis (timeline and media in
 * Redis). The client speaks the first part of "What is the weather in Berlin" (eSpeak NG, audio
 * only), its worker is drained (SIGTERM hands the session over), and once `venus.session.resumed`
 * arrives the client speaks the rest. Every wait is on an event.
 */
describe('a session resumed mid-utterance', () => {
  let cluster: FleetCluster;
  let tts: EspeakTts;

  beforeAll(async () => {
    tts = await EspeakTts.create();
    cluster = await startFleetCluster({
      name: 'recent-audio',
      workers: 2,
      harnessLatencyMs: 100,
      harnessConcurrency: 2,
      maxSessionsPerWorker: 4,
    });
  }, 240_000);

  afterAll(async () => {
    tts?.close();
    await cluster?.stop();
  });

  it('hears the whole request, including the part spoken to the old worker', async () => {
    const store = new RedisTimelineStore({ url: testRedisUrl(), prefix: cluster.prefix });
    const c = await RealtimeClient.connect({ url: cluster.edgeUrl });
    try {
      c.send({ type: 'session.update', session: { venus: { chunk_ms: 160 } } });
      const speech = await tts.synthesize('What is the weather in Berlin', 'en-us');
      const lead = new Int16Array(7_200); // 300 ms of silence before the words
      // "What is the" goes to the first worker: a little under half of the clip.
      const split = Math.floor((speech.length * 0.4) / 2_400) * 2_400;
      appendFrames(c, lead);
      appendFrames(c, speech.subarray(0, split));
      // The old worker has every frame of the first part stored before it is drained.
      const firstPartFrames = Math.ceil(7_200 / 2_400) + split / 2_400;
      let stored: TimelineEvent[] = [];
      await until(
        `the first worker to store the ${firstPartFrames} frames of the first part`,
        () => stored.filter((e) => e.type === 'user.audio').length >= firstPartFrames,
        60_000,
        async () => {
          stored = await store.read(c.sessionId);
        },
      );
      const counts = await Promise.all(cluster.workers.map((w) => relaySessions(w)));
      const old = cluster.workers[counts.indexOf(1)]!;
      process.kill(old.process.pid, 'SIGTERM');
      await c.waitFor((e) => e.type === 'venus.session.resumed', 60_000);
      appendFrames(c, speech.subarray(split));
      appendFrames(c, new Int16Array(24_000)); // a second of silence ends the turn

      const completed = await c.waitFor(
        (e) => e.type === 'conversation.item.input_audio_transcription.completed',
        60_000,
      );
      expect(String(completed.transcript)).toMatch(/what is the weather in berlin/i);
      expect(await old.process.exited).toBe(0);

      stored = await store.read(c.sessionId);
      const resumedAt = stored.find((e) => e.type === 'session.incarnation' && e.data.incarnation === 1)!.seq;
      const heardBefore = stored.filter(
        (e): e is Extract<TimelineEvent, { type: 'user.audio' }> => e.type === 'user.audio' && e.seq < resumedAt,
      );
      const transcript = stored.find(
        (e): e is Extract<TimelineEvent, { type: 'user.transcript' }> => e.type === 'user.transcript',
      );
      // Recognised by the new incarnation, over audio that the old one had received.
      expect(transcript!.seq).toBeGreaterThan(resumedAt);
      expect(transcript!.data.audio.fromInputSeq).toBeLessThanOrEqual(
        Math.max(...heardBefore.map((e) => e.data.inputSeq)),
      );
      // And answered: the weather function ran for Berlin.
      await c.waitFor((e) => e.type === 'venus.work.result' && /Berlin/.test(String(e.text)), 60_000);
      expect(c.events.filter((e) => e.type === 'error')).toEqual([]);
    } finally {
      await c.close();
      await store.close();
    }
  }, 400_000);
});
