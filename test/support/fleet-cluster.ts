import { randomUUID } from 'node:crypto';
import { heardText } from '@venus/protocol';
import { RealtimeClient } from '../../embedded/demo/realtime-client.ts';
import { removeRedisKeys, testRedisUrl } from './redis.ts';
import { startVenusProcess, type VenusProcess } from './venus-process.ts';

/** One GPU worker of a test fleet: its process, relay url and relay port. */
export interface FleetWorker {
  id: string;
  process: VenusProcess;
  url: string;
  port: string;
}

export interface FleetCluster {
  /** Keys of this cluster's timelines, delegations and registry in the test Redis. */
  prefix: string;
  workers: FleetWorker[];
  /** ws://…/v1/realtime of the edge (the first edge, where there are several). */
  edgeUrl: string;
  /** Every edge's ws://…/v1/realtime, where the fleet has several (`npm run cluster` has two). */
  edgeUrls?: string[];
  /** Stops every process still running and removes the cluster's Redis keys. */
  stop(): Promise<void>;
}

export interface FleetClusterOptions {
  /** Distinguishes the cluster's keys and worker ids (`<name>-w1`, …). */
  name: string;
  workers: number;
  /** How long each builtin delegation runs in the harness. */
  harnessLatencyMs: number;
  /** Delegations the harness runs at once: at least the sessions', so none waits in the queue. */
  harnessConcurrency: number;
  /**
   * Sessions each worker takes (VENUS_MAX_SESSIONS): room for all of them on one worker, so that
   * the capacity a worker measures on a loaded test machine does not refuse moved sessions.
   */
  maxSessionsPerWorker: number;
  /**
   * How the edge places sessions: over the workers' static relay list (default), or from the Redis
   * fleet registry they heartbeat into (VENUS_FLEET_TTL_MS `fleetTtlMs`), where an expired
   * registration moves a worker's sessions.
   */
  placement?: 'static' | 'registry';
  fleetTtlMs?: number;
  /** The Redis url a worker (by its index) reaches, when not the test Redis itself (e.g. a cuttable proxy). */
  workerRedisUrl?: (index: number) => string | undefined;
}

/**
 * An edge, GPU workers and a harness as separate real processes on the one test Redis (timelines in
 * Redis Streams, delegations on BullMQ), the edge placing over the workers' static relay list or
 * from the Redis fleet registry.
 */
export async function startFleetCluster(options: FleetClusterOptions): Promise<FleetCluster> {
  const prefix = `test:${options.name}:${randomUUID()}:`;
  const shared = { VENUS_REDIS_URL: testRedisUrl(), VENUS_REDIS_PREFIX: prefix, VENUS_HARNESS_PREFIX: prefix };
  const processes: VenusProcess[] = [];
  const stop = async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await removeRedisKeys(prefix);
  };
  try {
    const ids = Array.from({ length: options.workers }, (_, i) => `${options.name}-w${i + 1}`);
    const registry = options.placement === 'registry';
    const fleet: Record<string, string> = registry
      ? { VENUS_FLEET_PREFIX: prefix, VENUS_FLEET_TTL_MS: String(options.fleetTtlMs ?? 15_000) }
      : {};
    const workers = await Promise.all(
      ids.map(async (id, index): Promise<FleetWorker> => {
        const p = await startVenusProcess(
          'embedded/gpu-worker-main.ts',
          {
            ...shared,
            ...fleet,
            VENUS_REDIS_URL: options.workerRedisUrl?.(index) ?? shared.VENUS_REDIS_URL,
            VENUS_RELAY_PORT: '0',
            VENUS_WORKER_ID: id,
            VENUS_MAX_SESSIONS: String(options.maxSessionsPerWorker),
          },
          /relay\s+(ws:\/\/127\.0\.0\.1:(\d+)\/relay)/,
        );
        processes.push(p);
        return { id, process: p, url: p.ready[1]!, port: p.ready[2]! };
      }),
    );
    const harness = await startVenusProcess(
      'harness-functions/src/harness-main.ts',
      {
        ...shared,
        VENUS_METRICS_PORT: '0',
        VENUS_HARNESS_BUILTIN_LATENCY_MS: String(options.harnessLatencyMs),
        VENUS_HARNESS_CONCURRENCY: String(options.harnessConcurrency),
      },
      /"metrics":"(http:\/\/[^"]+)"/,
    );
    processes.push(harness);
    const edge = await startVenusProcess(
      'edge/src/edge-main.ts',
      registry
        ? { VENUS_PORT: '0', VENUS_REDIS_URL: shared.VENUS_REDIS_URL, VENUS_FLEET_PREFIX: prefix }
        : { VENUS_PORT: '0', VENUS_WORKERS: workers.map((w) => w.url).join(',') },
      /edge ready: (ws:\/\/\S+\/v1\/realtime)/,
    );
    processes.push(edge);
    return { prefix, workers, edgeUrl: edge.ready[1]!, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A realtime client on the edge that acknowledges playback, at 160 ms chunks. */
export async function connectFleetClient(edgeUrl: string): Promise<RealtimeClient> {
  const client = await RealtimeClient.connect({ url: edgeUrl, acknowledgePlayback: true });
  client.send({ type: 'session.update', session: { venus: { chunk_ms: 160, playback_acks: true } } });
  return client;
}

/** Sessions a worker's relay holds (its `/healthz`). */
export async function relaySessions(worker: FleetWorker): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${worker.port}/healthz`);
  const body = (await response.json()) as { sessions: number };
  return body.sessions;
}

/** The assistant text of one utterance as the client received it. */
export function assistantText(c: RealtimeClient, utteranceId: string): string {
  return c.timeline
    .filter((e) => e.type === 'assistant.text' && e.data.utteranceId === utteranceId)
    .map((e) => (e.type === 'assistant.text' ? e.data.delta : ''))
    .join('');
}

/** Starts a delegation that will still be running (builtin time lookup) and resolves with its work id once RUNNING. */
export async function delegationRunning(c: RealtimeClient): Promise<string> {
  c.say('What time is it in Tokyo?');
  const running = await c.waitForTimeline((e) => e.type === 'work.state' && e.data.state === 'RUNNING', 60_000);
  return running.type === 'work.state' ? running.data.workId : '';
}

/** Says something and waits until the reply with `text` was heard up to its word 'weather'. */
export async function heardWholeReply(c: RealtimeClient, text: string, say: () => void): Promise<void> {
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

/** The model asks this after "what is the weather" without a city. */
export const CITY_QUESTION = 'Which city would you like the weather for?';

/**
 * Says "Paris" and waits for a reply about the weather in Paris: only a context that holds the
 * earlier "which city?" turn makes a weather request of it.
 */
export async function answersFollowUp(c: RealtimeClient): Promise<void> {
  const from = c.timeline.length;
  c.say('Paris');
  await c.waitForTimeline(
    (e) =>
      c.timeline.indexOf(e) >= from &&
      e.type === 'assistant.text' &&
      /weather in Paris/.test(assistantText(c, e.data.utteranceId)),
    90_000,
  );
}
