import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RealtimeClient } from '../embedded/demo/realtime-client.ts';
import { RedisTimelineStore } from '../gpu-worker/src/timeline/index.ts';
import { expectDeliveredOnce, expectTimelineKept } from './support/fleet-checks.ts';
import { answersFollowUp, type FleetCluster, relaySessions, startFleetCluster } from './support/fleet-cluster.ts';
import { liveSessionsAskedForACity } from './support/fleet-scenario.ts';
import { testRedisUrl } from './support/redis.ts';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.ts';
import { until } from './support/until.ts';

const SESSIONS = 6;

/**
 * A GPU worker cut off from Redis while its relay to the edge stays up (a partition, a broken
 * Redis connection): its timeline writes and its heartbeat fail, but nothing on the relay says so.
 * The edge places from the Redis fleet registry; once the worker's registration has stayed expired
 * past the loss window, each of its sessions resumes on the other worker (`worker_lost`) on the same
 * client connection, with its stored timeline kept, its context rebuilt (the follow-up "Paris" is
 * understood) and its running delegation delivered once to the new incarnation.
 *
 * The cut worker reaches Redis through a TCP proxy of the test's that is cut; everyone else reaches
 * Redis directly. The registration TTL is 3 s here (VENUS_FLEET_TTL_MS) so the test is short; the
 * wait is on events, not on time.
 */
describe('failover of a worker whose registry heartbeat expired while its relay is up', () => {
  let cluster: FleetCluster;
  let proxy: TcpProxy;

  beforeAll(async () => {
    const redis = new URL(testRedisUrl());
    proxy = await startTcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) });
    cluster = await startFleetCluster({
      name: 'expired',
      workers: 2,
      harnessLatencyMs: 15_000,
      harnessConcurrency: SESSIONS,
      maxSessionsPerWorker: SESSIONS,
      placement: 'registry',
      fleetTtlMs: 3_000,
      workerRedisUrl: (index) => (index === 0 ? `redis://${proxy.address}` : undefined),
    });
  }, 240_000);

  afterAll(async () => {
    await cluster?.stop();
    await proxy?.cut();
  });

  it("moves the cut-off worker's sessions, and only those, with what they had", async () => {
    const store = new RedisTimelineStore({ url: testRedisUrl(), prefix: cluster.prefix });
    const clients: RealtimeClient[] = [];
    try {
      const { works, storedBefore } = await liveSessionsAskedForACity(cluster, store, SESSIONS, clients);
      const cutOff = cluster.workers[0]!;
      const onCutOff = await relaySessions(cutOff);
      // Least-loaded placement spreads the sessions over both workers.
      expect(onCutOff).toBeGreaterThan(0);
      expect(onCutOff).toBeLessThan(SESSIONS);
      const eventsBefore = clients.map((c) => c.events.length);
      await proxy.cut();

      const resumed = (c: RealtimeClient, i: number) =>
        c.events.slice(eventsBefore[i]).find((e) => e.type === 'venus.session.resumed');
      await until(
        `the ${onCutOff} sessions of the cut-off worker to resume elsewhere`,
        () => clients.filter((c, i) => resumed(c, i) !== undefined).length >= onCutOff,
        120_000,
      );
      const moved = clients.filter((c, i) => resumed(c, i) !== undefined);
      expect(moved).toHaveLength(onCutOff);
      for (const c of moved) expect(resumed(c, clients.indexOf(c))).toMatchObject({ reason: 'worker_lost' });
      // The process itself is alive throughout: nothing but its registration told the edge.
      expect(cutOff.process.pid).toBeGreaterThan(0);
      expect(await relaySessions(cutOff).then(() => 'answers')).toBe('answers');

      await Promise.all(moved.map((c) => answersFollowUp(c)));
      for (const c of clients) expectTimelineKept(storedBefore.get(c.sessionId) ?? [], await store.read(c.sessionId));
      for (const c of moved) await expectDeliveredOnce(store, c, works[clients.indexOf(c)]!);
      for (const c of clients) expect(c.events.filter((e) => e.type === 'error')).toEqual([]);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
      await store.close();
    }
  }, 400_000);
});
