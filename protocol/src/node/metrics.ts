import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { withTimeout } from '../with-timeout.ts';

/**
 * The runtime's Prometheus series (docs/observability.md lists each one). Every process builds one
 * VenusMetrics with its own prom-client Registry (never the library's global one, so tests and the
 * single-process `npm start` can hold several) and serves `render()` at `GET /metrics`.
 *
 * Observations are O(1) counter and histogram updates; gauges are read from their sources only
 * when scraped, and the one scrape-time remote read (BullMQ job counts) is bounded by a timeout.
 *
 * @example
 *   const metrics = new VenusMetrics({ process: 'gpu-worker' });
 *   metrics.watchSessions('gpu-1', () => relay.sessionCount);
 *   host.stepStats.onRecord((ms, missed) => metrics.recordStep('gpu-1', ms, missed));
 *   const text = await metrics.render();
 */
export interface VenusMetricsOptions {
  /** Which process this is (`edge`, `gpu-worker`, `harness`, `start`): the `process` label of every series. */
  process: string;
  /** Node's own process metrics (CPU, memory, event loop lag) in the same registry. Default true. */
  defaultMetrics?: boolean;
}

/** Job counts of the delegation queue, by BullMQ state (waiting, active, delayed, ...). */
export type QueueCounts = () => Promise<Record<string, number>>;

/** How long a scrape waits for the queue's counts before leaving the gauge as it was. */
const QUEUE_COUNTS_TIMEOUT_MS = 2_000;

/** Seconds: a foreground step runs within one chunk (20 ms to 1 s). */
const STEP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2];
/** Seconds: turn-taking latencies, from a fast barge-in stop to a slow first answer. */
const TURN_BUCKETS = [0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10];

export class VenusMetrics {
  readonly registry = new Registry();
  readonly contentType: string = this.registry.contentType;
  readonly stepCost: Histogram<'worker'>;
  readonly deadlineMisses: Counter<'worker'>;
  readonly sessions: Gauge<'worker'>;
  readonly delegations: Counter<'state'>;
  readonly harnessRuns: Counter<'outcome'>;
  readonly queueJobs: Gauge<'state'>;
  readonly relayReconnects: Counter<'worker'>;
  readonly failovers: Counter<'reason'>;
  readonly stopLatency: Histogram<'worker'>;
  readonly responseLatency: Histogram<'worker'>;
  readonly edgeConnections: Gauge<'transport'>;
  /** One entry per worker id this process hosts (one, or none): bounded by construction. */
  readonly #sessionSources = new Map<string, () => number>();
  /** One per queue this process reads (at most one in practice). */
  readonly #queueSources: QueueCounts[] = [];
  /** Live client connections plus ended ones not yet swept: at most twice the live ones + 1,024. */
  readonly #connections = new Set<{ transport: string; closed: () => boolean }>();
  #sweepAt = 1_024;

  constructor(options: VenusMetricsOptions) {
    this.registry.setDefaultLabels({ process: options.process });
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry });
    const registers = [this.registry];
    const sessionSources = this.#sessionSources;
    const queueSources = this.#queueSources;
    const sweep = () => this.#sweepConnections();
    const transportsSeen = new Set<string>();
    this.stepCost = new Histogram({
      name: 'venus_step_cost_seconds',
      help: "Time one foreground step (a chunk's model call) took, missed steps included",
      labelNames: ['worker'],
      buckets: STEP_BUCKETS,
      registers,
    });
    this.deadlineMisses = new Counter({
      name: 'venus_deadline_misses_total',
      help: 'Foreground steps still running at the next chunk boundary',
      labelNames: ['worker'],
      registers,
    });
    this.sessions = new Gauge({
      name: 'venus_sessions',
      help: 'Live sessions on a GPU worker',
      labelNames: ['worker'],
      registers,
      collect() {
        for (const [worker, count] of sessionSources) this.set({ worker }, count());
      },
    });
    this.delegations = new Counter({
      name: 'venus_delegations_total',
      help: 'Delegations entering each work state, as recorded on the session timelines',
      labelNames: ['state'],
      registers,
    });
    this.harnessRuns = new Counter({
      name: 'venus_harness_runs_total',
      help: 'Delegations a harness process ran to an end, by outcome (completed, failed)',
      labelNames: ['outcome'],
      registers,
    });
    this.queueJobs = new Gauge({
      name: 'venus_queue_jobs',
      help: 'Jobs in the BullMQ delegation queue, by job state',
      labelNames: ['state'],
      registers,
      async collect() {
        for (const counts of queueSources) {
          const read = await withTimeout(counts(), QUEUE_COUNTS_TIMEOUT_MS);
          if (read === undefined) continue;
          for (const [state, count] of Object.entries(read)) this.set({ state }, count);
        }
      },
    });
    this.relayReconnects = new Counter({
      name: 'venus_relay_reconnects_total',
      help: "An edge's relay connection to a worker coming back after it dropped",
      labelNames: ['worker'],
      registers,
    });
    this.failovers = new Counter({
      name: 'venus_failovers_total',
      help: 'Sessions re-placed on another worker (failover or drain handover)',
      labelNames: ['reason'],
      registers,
    });
    this.stopLatency = new Histogram({
      name: 'venus_stop_latency_seconds',
      help: "From the user starting to speak over the assistant to the assistant's speech stopping",
      labelNames: ['worker'],
      buckets: TURN_BUCKETS,
      registers,
    });
    this.responseLatency = new Histogram({
      name: 'venus_response_latency_seconds',
      help: "From the end of the user's speech to the first audio of the assistant's answer",
      labelNames: ['worker'],
      buckets: TURN_BUCKETS,
      registers,
    });
    this.edgeConnections = new Gauge({
      name: 'venus_edge_connections',
      help: 'Live client connections on an edge, by transport',
      labelNames: ['transport'],
      registers,
      collect() {
        const live = sweep();
        for (const transport of live.keys()) transportsSeen.add(transport);
        // A transport whose last connection ended reads 0 rather than its last count.
        for (const transport of transportsSeen) this.set({ transport }, live.get(transport) ?? 0);
      },
    });
  }

  /** Reads a worker's live session count at each scrape. */
  watchSessions(worker: string, count: () => number): void {
    this.#sessionSources.set(worker, count);
    this.sessions.set({ worker }, count());
  }

  /** Reads the delegation queue's job counts at each scrape. */
  watchQueue(counts: QueueCounts): void {
    this.#queueSources.push(counts);
  }

  recordStep(worker: string, latencyMs: number, missed: boolean): void {
    this.stepCost.observe({ worker }, latencyMs / 1000);
    if (missed) this.deadlineMisses.inc({ worker });
  }

  /** The hook for whatever re-places a session on another worker. */
  recordFailover(reason: 'worker_lost' | 'drain' | string): void {
    this.failovers.inc({ reason });
  }

  /**
   * Counts a client connection on `transport` while `closed()` is false. Ended connections leave
   * at the next scrape, or when the set has grown past twice what was live at the last sweep.
   */
  trackConnection(transport: string, closed: () => boolean): void {
    this.#connections.add({ transport, closed });
    if (this.#connections.size > this.#sweepAt) this.#sweepConnections();
  }

  #sweepConnections(): Map<string, number> {
    const live = new Map<string, number>();
    for (const connection of this.#connections) {
      if (connection.closed()) this.#connections.delete(connection);
      else live.set(connection.transport, (live.get(connection.transport) ?? 0) + 1);
    }
    this.#sweepAt = 2 * this.#connections.size + 1_024;
    return live;
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }
}
