import type { TimelineEvent } from '@venus/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RealtimeClient } from '../embedded/demo/realtime-client.ts';
import { RedisTimelineStore } from '../gpu-worker/src/timeline/index.ts';
import { expectDeliveredOnce, expectTimelineKept } from './support/fleet-checks.ts';
import { answersFollowUp, type FleetCluster, startFleetCluster } from './support/fleet-cluster.ts';
import { liveSessionsAskedForACity } from './support/fleet-scenario.ts';
import { testRedisUrl } from './support/redis.ts';
import { until } from './support/until.ts';

/** Live sessions, each streaming microphone audio with a delegation in flight. */
const SESSIONS = 12;

/**
 * Drain: an edge, two GPU workers and a harness as real processes on one real Redis. Every session
 * streams microphone audio, has a delegation running in the harness and has heard the model ask
 * which city; the worker holding most of them gets SIGTERM. It hands each of its sessions over and
 * exits 0: every moved session gets `venus.session.resumed` (reason `drain`) on the same client
 * connection, no client sees an error, the stored timelines keep every event (every microphone frame
 * sent is stored once, input seqs contiguous across incarnations, no `session.closed` written by the
 * drained worker), the running delegation is delivered once to the new incarnation, and the rebuilt
 * context answers the follow-up "Paris".
 */
describe('drain of a GPU worker', () => {
  let cluster: FleetCluster;

  beforeAll(async () => {
    // Delegations outlast the drain (20 s): their results land on the new incarnation.
    cluster = await startFleetCluster({
      name: 'drain',
      workers: 2,
      harnessLatencyMs: 20_000,
      harnessConcurrency: SESSIONS,
      maxSessionsPerWorker: SESSIONS,
    });
  }, 240_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  it('hands every live session over to the other worker and exits 0, with nothing lost', async () => {
    const store = new RedisTimelineStore({ url: testRedisUrl(), prefix: cluster.prefix });
    const clients: RealtimeClient[] = [];
    try {
      // From the city question on, every client streams its microphone (100 ms frames) through the drain.
      const {
        works,
        busiest: drained,
        busiestSessions: drainedSessions,
        storedBefore,
      } = await liveSessionsAskedForACity(cluster, store, SESSIONS, clients, (all) => {
        for (const c of all) c.startMicrophone();
      });

      const resumedOf = (c: RealtimeClient) => c.events.filter((e) => e.type === 'venus.session.resumed');
      const sigterm = performance.now();
      process.kill(drained.process.pid, 'SIGTERM');
      // Every session of the drained worker resumes on the other one (the worker exits once all left it).
      const allResumed = until(
        `the ${drainedSessions} sessions of the drained worker to resume`,
        () => clients.filter((c) => resumedOf(c).length > 0).length === drainedSessions,
        120_000,
      ).then(() => performance.now() - sigterm);
      const code = await drained.process.exited;
      const drainMs = performance.now() - sigterm;
      expect(code).toBe(0);
      const resumedMs = await allResumed;
      // Figures for the reader, not assertions (speed targets belong to the bench).
      process.stdout.write(
        `drain: ${drainedSessions} sessions handed over; SIGTERM to the last venus.session.resumed ${Math.round(resumedMs)} ms, to exit ${Math.round(drainMs)} ms\n`,
      );
      const moved = clients.filter((c) => resumedOf(c).length > 0);
      for (const c of moved) {
        expect(resumedOf(c)).toMatchObject([{ type: 'venus.session.resumed', incarnation: 1, reason: 'drain' }]);
      }

      await Promise.all(moved.map((c) => answersFollowUp(c)));
      for (const c of clients) expectTimelineKept(storedBefore.get(c.sessionId) ?? [], await store.read(c.sessionId));
      for (const c of moved) {
        const after = await expectDeliveredOnce(store, c, works[clients.indexOf(c)]!);
        // The drained worker let the session go without ending it.
        expect(after.some((e) => e.type === 'session.closed')).toBe(false);
      }
      // No client saw an error or lost its connection (each moved one answered "Paris" above).
      for (const c of clients) expect(c.events.filter((e) => e.type === 'error')).toEqual([]);

      // Every microphone frame sent is stored once, user input seqs contiguous across the move:
      // closing a client ends its session after all it sent, so its timeline ends in `session.closed`.
      const sent = new Map(clients.map((c) => [c.sessionId, c] as const));
      await Promise.all(clients.map((c) => c.close()));
      for (const [session, c] of sent) {
        let stored: TimelineEvent[] = [];
        await until(
          `the end of ${session} to be stored`,
          () => stored.some((e) => e.type === 'session.closed'),
          60_000,
          async () => {
            stored = await store.read(session);
          },
        );
        expect(stored.filter((e) => e.type === 'user.audio')).toHaveLength(c.userAudio.length);
        const inputSeqs = stored.flatMap((e) => ('inputSeq' in e.data ? [e.data.inputSeq] : []));
        expect(inputSeqs).toEqual(inputSeqs.map((_, i) => i + 1));
        expect(stored.filter((e) => e.type === 'session.closed')).toHaveLength(1);
      }
    } finally {
      await Promise.all(clients.map((c) => c.close()));
      await store.close();
    }
  }, 400_000);
});
