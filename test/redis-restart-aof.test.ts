import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TimelineEvent } from '@venus/protocol';
import { fleetKeys } from '@venus/protocol';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RealtimeClient } from '../embedded/demo/realtime-client.ts';
import { RedisTimelineStore } from '../gpu-worker/src/timeline/index.ts';
import { freePort, startRedis } from './support/redis.ts';
import { until } from './support/until.ts';
import { startVenusProcess, type VenusProcess } from './support/venus-process.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SESSIONS = 6;
/** Delegations the harness runs at once: with the gate closed, the rest stay queued in BullMQ. */
const HARNESS_SLOTS = 2;
const WEATHER = "What's the weather in Paris?";

const isWork = (e: TimelineEvent, workId: string, state?: string): boolean =>
  e.type === 'work.state' && e.data.workId === workId && (state === undefined || e.data.state === state);

/**
 * Redis restart during live sessions: an edge, two GPU workers and a harness as real processes on
 * a redis-server of the test's own with `--appendonly yes --appendfsync always` (every write is on
 * disk before Redis acknowledges it, so what a client was told was stored, and every BullMQ job
 * accepted, survives a SIGKILL of redis-server; `everysec` would allow losing the last second).
 * Sessions stream microphone audio with delegations held in the harness (two running, the rest
 * queued); redis-server is SIGKILLed and started again on the same dir and port. The clients stay
 * connected, later turns are answered, every timeline event a client was sent is in the stored
 * stream (same seq, same event, contiguous), and every delegation completes and is delivered once.
 */
describe('Redis restart with AOF during live sessions', () => {
  const processes: VenusProcess[] = [];
  let redis: ChildProcess;
  let port: number;
  let dataDir: string;
  let gate: string;
  let edgeUrl: string;

  beforeAll(async () => {
    port = await freePort();
    dataDir = mkdtempSync(path.join(tmpdir(), 'venus-aof-'));
    gate = path.join(dataDir, 'gate-open');
    redis = await startRedis(port, dataDir);
    const redisUrl = `redis://127.0.0.1:${port}`;
    const workers = await Promise.all(
      ['aof-w1', 'aof-w2'].map((id) =>
        startVenusProcess(
          'embedded/gpu-worker-main.ts',
          { VENUS_REDIS_URL: redisUrl, VENUS_RELAY_PORT: '0', VENUS_WORKER_ID: id },
          /relay\s+(ws:\/\/127\.0\.0\.1:\d+\/relay)/,
        ),
      ),
    );
    processes.push(...workers);
    processes.push(
      await startVenusProcess(
        'harness-functions/src/harness-main.ts',
        {
          VENUS_REDIS_URL: redisUrl,
          VENUS_METRICS_PORT: '0',
          VENUS_HARNESS_CONCURRENCY: String(HARNESS_SLOTS),
          VENUS_HARNESS_FUNCTIONS_MODULE: path.join(ROOT, 'test', 'redis-restart-functions.ts'),
          RESTART_GATE: gate,
        },
        /"event":"harness\.ready"/,
      ),
    );
    // Placement from the Redis fleet registry, so the registry's heartbeat crosses the restart too.
    const edge = await startVenusProcess(
      'edge/src/edge-main.ts',
      { VENUS_PORT: '0', VENUS_REDIS_URL: redisUrl },
      /edge ready: (ws:\/\/\S+\/v1\/realtime)/,
    );
    processes.push(edge);
    edgeUrl = edge.ready[1]!;
  }, 240_000);

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    redis?.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps every session, accepted event and job across a SIGKILL of redis-server', async () => {
    const redisUrl = `redis://127.0.0.1:${port}`;
    const clients: RealtimeClient[] = [];
    let store: RedisTimelineStore | undefined;
    let owedWorks: string[] = [];
    try {
      for (let i = 0; i < SESSIONS; i++) {
        const client = await RealtimeClient.connect({ url: edgeUrl, acknowledgePlayback: true });
        client.send({ type: 'session.update', session: { venus: { chunk_ms: 160, playback_acks: true } } });
        client.startMicrophone();
        clients.push(client);
      }
      const works = await Promise.all(
        clients.map(async (c) => {
          c.say(WEATHER);
          const queued = await named(
            `session ${c.sessionId}: the first request's work queued`,
            c.waitForTimeline((e) => e.type === 'work.state' && e.data.state === 'QUEUED', 90_000),
          );
          return queued.type === 'work.state' ? queued.data.workId : '';
        }),
      );
      const running = (): number =>
        clients.filter((c, i) => c.timeline.some((e) => isWork(e, works[i]!, 'RUNNING'))).length;
      await until(`${HARNESS_SLOTS} delegations running in the harness`, () => running() === HARNESS_SLOTS, 90_000);

      redis.kill('SIGKILL');
      await new Promise((resolve) => redis.once('exit', resolve));
      redis = await startRedis(port, dataDir);

      // Later turns are answered on the same connections: the model takes a new request, whose
      // delegation queues in BullMQ behind the held ones.
      const later = await Promise.all(
        clients.map(async (c) => {
          const from = c.timeline.length;
          c.say('What time is it in Tokyo?');
          const queued = await named(
            `session ${c.sessionId}: the request after the restart queued`,
            c.waitForTimeline(
              (e) => c.timeline.indexOf(e) >= from && e.type === 'work.state' && e.data.state === 'QUEUED',
              120_000,
            ),
          );
          return queued.type === 'work.state' ? queued.data.workId : '';
        }),
      );
      // A new session is placed from the registry that the workers' heartbeats keep after the restart.
      const late = await RealtimeClient.connect({ url: edgeUrl });
      late.say('What time is it in Tokyo?');
      const lateQueued = await named(
        'the session opened after the restart: its work queued',
        late.waitForTimeline((e) => e.type === 'work.state' && e.data.state === 'QUEUED', 120_000),
      );
      clients.push(late);
      const registry = new Redis(redisUrl);
      const members = await registry.smembers(fleetKeys().workers).finally(() => registry.quit());
      expect(members.sort()).toEqual(['aof-w1', 'aof-w2']);

      // Every delegation, held across the restart (running or queued) or queued after it, completes
      // and is delivered once.
      const owed = clients.map((_, i) =>
        i < works.length ? [works[i]!, later[i]!] : [lateQueued.type === 'work.state' ? lateQueued.data.workId : ''],
      );
      owedWorks = owed.flat();
      writeFileSync(gate, 'open');
      await Promise.all(
        owed.flatMap((ids, i) =>
          ids.map((id) =>
            named(
              `session ${clients[i]!.sessionId}: work ${id} delivered`,
              clients[i]!.waitForTimeline((e) => isWork(e, id, 'DELIVERED'), 180_000),
            ),
          ),
        ),
      );

      store = new RedisTimelineStore({ url: redisUrl, prefix: 'venus:' });
      for (const [i, c] of clients.entries()) {
        // What it had been told so far (the session goes on streaming while the store is read).
        const told = c.timeline.slice();
        const lastTold = Math.max(...told.map((e) => e.seq));
        let stored: TimelineEvent[] = [];
        const s = store;
        await until(
          `session ${c.sessionId}'s stream to hold seq ${lastTold}`,
          () => stored.length >= lastTold,
          60_000,
          async () => {
            stored = await s.read(c.sessionId);
          },
        );
        expect(stored.map((e) => e.seq)).toEqual(stored.map((_, k) => k + 1));
        // What the client was told is what was stored, event for event.
        for (const event of told) expect(stored[event.seq - 1]).toEqual(event);
        expect(c.events.filter((e) => e.type === 'error')).toEqual([]);
        for (const workId of owed[i]!) {
          expect(stored.filter((e) => e.type === 'work.result' && e.data.result.workId === workId)).toHaveLength(1);
          expect(stored.filter((e) => e.type === 'work.admitted' && e.data.workId === workId)).toHaveLength(1);
          expect(stored.filter((e) => isWork(e, workId, 'DELIVERED'))).toHaveLength(1);
          expect(c.timeline.filter((e) => isWork(e, workId, 'DELIVERED'))).toHaveLength(1);
          expect(stored.some((e) => isWork(e, workId, 'EXPIRED') || isWork(e, workId, 'FAILED'))).toBe(false);
        }
      }
    } catch (error) {
      // What the processes said (warn level and up) is where a lost job or a stuck reconnect shows.
      for (const p of processes) console.error(`--- pid ${p.pid} stderr (tail) ---\n${p.stderr().slice(-6000)}`);
      for (const c of clients)
        console.error(
          `--- session ${c.sessionId} work states: ${c.timeline
            .filter((e) => e.type === 'work.state')
            .map((e) => (e.type === 'work.state' ? `${e.data.workId}:${e.data.state}` : ''))
            .join(' ')}`,
        );
      await describeWorks(redisUrl, owedWorks, clients).catch((e: unknown) => console.error('no work report:', e));
      throw error;
    } finally {
      await Promise.all(clients.map((c) => c.close()));
      await store?.close();
    }
  }, 600_000);
});

/** `wait`, whose failure says which wait it was (the client's own timeout names only the events it has). */
async function named<T>(what: string, wait: Promise<T>): Promise<T> {
  try {
    return await wait;
  } catch (error) {
    throw new Error(`${what}: ${(error as Error).message}`, { cause: error });
  }
}

/** Where each undelivered work stands in Redis: its work record and its BullMQ job (a failure's evidence). */
async function describeWorks(redisUrl: string, workIds: string[], clients: RealtimeClient[]): Promise<void> {
  const delivered = new Set(
    clients.flatMap((c) =>
      c.timeline.flatMap((e) => (e.type === 'work.state' && e.data.state === 'DELIVERED' ? [e.data.workId] : [])),
    ),
  );
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    for (const id of workIds.filter((w) => !delivered.has(w))) {
      const record = await redis.hgetall(`venus:work:${id}`);
      const job = `venus:delegations:${id}`;
      const jobFields = await redis.hmget(job, 'processedOn', 'finishedOn', 'failedReason', 'atm', 'ats', 'stc');
      const where: string[] = [];
      for (const list of ['wait', 'active', 'paused']) {
        if ((await redis.lpos(`venus:delegations:${list}`, id)) !== null) where.push(list);
      }
      for (const set of ['completed', 'failed', 'delayed', 'prioritized']) {
        if ((await redis.zscore(`venus:delegations:${set}`, id)) !== null) where.push(set);
      }
      const lock = await redis.exists(`${job}:lock`);
      console.error(
        `--- work ${id}: record ${JSON.stringify(record)}; job exists ${await redis.exists(job)} in [${where.join(',')}] lock ${lock} fields ${JSON.stringify(jobFields)}`,
      );
    }
  } finally {
    redis.disconnect();
  }
}
