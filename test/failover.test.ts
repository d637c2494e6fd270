import { randomUUID } from 'node:crypto';
import { heardText, type TimelineEvent } from '@venus/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RealtimeClient } from '../embedded/demo/realtime-client.ts';
import { RedisTimelineStore } from '../gpu-worker/src/timeline/index.ts';
import { removeRedisKeys, testRedisUrl } from './support/redis.ts';
import { until } from './support/until.ts';
import { startVenusProcess, type VenusProcess } from './support/venus-process.ts';

/** Live sessions in the chaos run, as the issue asks (about a minute on 2 shared cores). */
const SESSIONS = 30;
const CITY_QUESTION = 'Which city would you like the weather for?';

/**
 * Chaos: an edge, two GPU workers and a harness as real processes on one real Redis (timelines in
 * Redis Streams, delegations on BullMQ). Sessions hear the model ask which city; the worker holding
 * them is SIGKILLed; each session goes on on the other worker without its client reconnecting
 * (`venus.session.resumed`), its stored timeline keeps every event stored before the kill, and the
 * rebuilt context answers a follow-up that only makes sense after the earlier turn ("Paris").
 */
describe('failover of a killed GPU worker', () => {
  const prefix = `test:failover:${randomUUID()}:`;
  const processes: VenusProcess[] = [];
  const workers: { process: VenusProcess; url: string; port: string }[] = [];
  let edgeUrl: string;

  beforeAll(async () => {
    const redis = testRedisUrl();
    const shared = { VENUS_REDIS_URL: redis, VENUS_REDIS_PREFIX: prefix, VENUS_HARNESS_PREFIX: prefix };
    const started = await Promise.all(
      ['fo-w1', 'fo-w2'].map((id) =>
        startVenusProcess(
          'embedded/gpu-worker-main.ts',
          { ...shared, VENUS_RELAY_PORT: '0', VENUS_WORKER_ID: id },
          /relay\s+(ws:\/\/127\.0\.0\.1:(\d+)\/relay)/,
        ),
      ),
    );
    for (const p of started) {
      processes.push(p);
      workers.push({ process: p, url: p.ready[1]!, port: p.ready[2]! });
    }
    const harness = await startVenusProcess(
      'harness-functions/src/harness-main.ts',
      {
        ...shared,
        VENUS_METRICS_PORT: '0',
        VENUS_HARNESS_BUILTIN_LATENCY_MS: '15000',
        // Every session's delegation runs at once: with fewer slots than sessions, the last ones
        // stay QUEUED behind the others' 15 s and the test waited on the queue, not on failover.
        VENUS_HARNESS_CONCURRENCY: String(SESSIONS),
      },
      /"metrics":"(http:\/\/[^"]+)"/,
    );
    processes.push(harness);
    const edge = await startVenusProcess(
      'edge/src/edge-main.ts',
      { VENUS_PORT: '0', VENUS_WORKERS: workers.map((w) => w.url).join(',') },
      /edge ready: (ws:\/\/\S+\/v1\/realtime)/,
    );
    processes.push(edge);
    edgeUrl = edge.ready[1]!;
  }, 240_000);

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await removeRedisKeys(prefix);
  });

  it('resumes every session of the killed worker elsewhere with what was heard', async () => {
    const store = new RedisTimelineStore({ url: testRedisUrl(), prefix });
    const clients: RealtimeClient[] = [];
    try {
      for (let i = 0; i < SESSIONS; i++) {
        const client = await RealtimeClient.connect({ url: edgeUrl, acknowledgePlayback: true });
        client.send({ type: 'session.update', session: { venus: { chunk_ms: 160, playback_acks: true } } });
        clients.push(client);
      }
      // Each session has a delegation running in the harness (it takes 15 s), then hears the model ask for a city.
      const works = await Promise.all(
        clients.map(async (c) => {
          c.say('What time is it in Tokyo?');
          const running = await c.waitForTimeline((e) => e.type === 'work.state' && e.data.state === 'RUNNING', 60_000);
          return running.type === 'work.state' ? running.data.workId : '';
        }),
      );
      await Promise.all(clients.map((c) => heardWholeReply(c, CITY_QUESTION, () => c.say('what is the weather'))));

      // The worker holding the most sessions (by its relay's count) is killed outright.
      const counts = await Promise.all(workers.map((w) => relaySessions(w.port)));
      const victim = workers[counts[0]! >= counts[1]! ? 0 : 1]!;
      const victimSessions = Math.max(...counts);
      expect(victimSessions).toBeGreaterThan(0);
      const storedBefore = new Map<string, TimelineEvent[]>();
      for (const c of clients) storedBefore.set(c.sessionId, await store.read(c.sessionId));
      const eventsBefore = clients.map((c) => c.events.length);
      process.kill(victim.process.pid, 'SIGKILL');
      await victim.process.exited;

      const resumed = clients.filter((c) => c.events.length >= 0);
      const moved: RealtimeClient[] = [];
      await until(
        `the ${victimSessions} sessions of the killed worker to resume`,
        () => moved.length === victimSessions,
        120_000,
        async () => {
          moved.splice(0);
          for (const [i, c] of resumed.entries()) {
            if (c.events.slice(eventsBefore[i]).some((e) => e.type === 'venus.session.resumed')) moved.push(c);
          }
        },
      );
      // The follow-up depends on the earlier turn: without the context it is not a weather request.
      await Promise.all(
        moved.map(async (c) => {
          const from = c.timeline.length;
          c.say('Paris');
          await c.waitForTimeline(
            (e) =>
              c.timeline.indexOf(e) >= from &&
              e.type === 'assistant.text' &&
              /weather in Paris/.test(assistantText(c, e.data.utteranceId)),
            90_000,
          );
        }),
      );
      for (const c of clients) {
        const before = storedBefore.get(c.sessionId) ?? [];
        const after = await store.read(c.sessionId);
        // Nothing stored before the kill is lost, and seqs stay contiguous across incarnations.
        expect(after.slice(0, before.length)).toEqual(before);
        expect(after.map((e) => e.seq)).toEqual(after.map((_, i) => i + 1));
      }
      // The delegation that was running when its worker died is delivered to the new incarnation, once.
      for (const c of moved) {
        const workId = works[clients.indexOf(c)]!;
        await c.waitForTimeline((e) => e.type === 'work.admitted' && e.data.workId === workId, 120_000);
        let after = await store.read(c.sessionId);
        await until(
          `the admission of ${workId} to be stored`,
          () => after.some((e) => e.type === 'work.admitted' && e.data.workId === workId),
          30_000,
          async () => {
            after = await store.read(c.sessionId);
          },
        );
        const incarnations = after.filter((e) => e.type === 'session.incarnation').map((e) => e.data.incarnation);
        expect(incarnations).toEqual([0, 1]);
        const resumedAt = after.find((e) => e.type === 'session.incarnation' && e.data.incarnation === 1)?.seq ?? 0;
        const results = after.filter((e) => e.type === 'work.result' && e.data.result.workId === workId);
        // A result that landed before the kill but was not admitted yet comes again to the new
        // incarnation: one landing and one admission there, whatever the old one had.
        expect(results.filter((e) => e.seq > resumedAt)).toHaveLength(1);
        const admitted = after.filter((e) => e.type === 'work.admitted' && e.data.workId === workId);
        expect(admitted.map((e) => e.seq > resumedAt)).toEqual([true]);
        expect(
          after.some((e) => e.type === 'work.state' && e.data.workId === workId && e.data.state === 'EXPIRED'),
        ).toBe(false);
      }
    } finally {
      await Promise.all(clients.map((c) => c.close()));
      await store.close();
    }
  }, 400_000);
});

function assistantText(c: RealtimeClient, utteranceId: string): string {
  return c.timeline
    .filter((e) => e.type === 'assistant.text' && e.data.utteranceId === utteranceId)
    .map((e) => (e.type === 'assistant.text' ? e.data.delta : ''))
    .join('');
}

/** Says something and waits until the reply with `text` was heard up to its word 'weather'. */
async function heardWholeReply(c: RealtimeClient, text: string, say: () => void): Promise<void> {
  const from = c.timeline.length;
  say();
  let utteranceId = '';
  await c.waitForTimeline((e) => {
    if (c.timeline.indexOf(e) < from || e.type !== 'assistant.utterance' || e.data.phase !== 'finished') return false;
    if (assistantText(c, e.data.utteranceId).trim() !== text) return false;
    utteranceId = e.data.utteranceId;
    return true;
  }, 90_000);
  const audioMs = c.timeline
    .filter((e) => e.type === 'assistant.audio' && e.data.utteranceId === utteranceId)
    .reduce((end, e) => (e.type === 'assistant.audio' ? Math.max(end, e.data.startMs + e.data.durationMs) : end), 0);
  // Heard far enough to know what was asked (the heard-text rule over its audio, as the worker counts).
  await c.waitForTimeline(
    (e) =>
      e.type === 'playback.ack' &&
      e.data.utteranceId === utteranceId &&
      heardText([{ text, durationMs: audioMs }], e.data.playedMs).includes('weather'),
    60_000,
  );
}

async function relaySessions(port: string): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${port}/healthz`);
  const body = (await response.json()) as { sessions: number };
  return body.sessions;
}
