import type { TimelineEvent } from '@venus/protocol';
import { expect } from 'vitest';
import type { RealtimeClient } from '../../embedded/demo/realtime-client.ts';
import type { RedisTimelineStore } from '../../gpu-worker/src/timeline/index.ts';
import {
  CITY_QUESTION,
  connectFleetClient,
  delegationRunning,
  type FleetCluster,
  type FleetWorker,
  heardWholeReply,
  relaySessions,
} from './fleet-cluster.ts';

/** Live sessions about to lose their worker, and what each had before. */
export interface FleetScenario {
  clients: RealtimeClient[];
  /** Each client's delegation, running in the harness. */
  works: string[];
  /** The worker holding the most sessions (by its relay's count), and how many. */
  busiest: FleetWorker;
  busiestSessions: number;
  /** Each session's stored timeline before its worker goes. */
  storedBefore: Map<string, TimelineEvent[]>;
}

/**
 * `sessions` clients on the cluster's edge, each with a delegation running in the harness and
 * having heard the model ask which city (what a follow-up after the move depends on). Connected
 * clients are pushed into `clients` as they come, so the caller closes them whatever happens.
 */
export async function liveSessionsAskedForACity(
  cluster: FleetCluster,
  store: RedisTimelineStore,
  sessions: number,
  clients: RealtimeClient[],
  beforeCount: (clients: RealtimeClient[]) => void = () => {},
): Promise<FleetScenario> {
  // Sessions take turns over the fleet's edges, so each edge has its own to fail over.
  const edges = cluster.edgeUrls ?? [cluster.edgeUrl];
  for (let i = 0; i < sessions; i++) clients.push(await connectFleetClient(edges[i % edges.length]!));
  const works = await Promise.all(clients.map((c) => delegationRunning(c)));
  await Promise.all(clients.map((c) => heardWholeReply(c, CITY_QUESTION, () => c.say('what is the weather'))));
  beforeCount(clients);
  const counts = await Promise.all(cluster.workers.map((w) => relaySessions(w)));
  const busiestSessions = Math.max(...counts);
  const busiest = cluster.workers[counts.indexOf(busiestSessions)]!;
  expect(busiestSessions).toBeGreaterThan(0);
  const storedBefore = new Map<string, TimelineEvent[]>();
  for (const c of clients) storedBefore.set(c.sessionId, await store.read(c.sessionId));
  return { clients, works, busiest, busiestSessions, storedBefore };
}
