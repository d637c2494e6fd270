import { randomUUID } from 'node:crypto';
import { DELEGATION_LIMITS, type DelegationRequest, VenusError, type WorkEvent } from '@venus/protocol';
import { DelayedError, type Job, UnrecoverableError, Worker } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import { z } from 'zod';
import { type DelegationRunLike, type RunnerChoice, type RunOutcome, runnerFrom } from '../delegation-runner.ts';
import { startProgressTicker } from '../progress-ticker.ts';
import { type DelegationJob, DelegationJobSchema } from './delegation-job.ts';
import { jobIdFor } from './delegation-keys.ts';
import { type DelegationScripts, defineDelegationScripts, type WorkKeys } from './delegation-scripts.ts';
import { traceJob } from './job-tracing.ts';
import { type QueueSide, queueSide } from './queue-options.ts';

/**
 * What to run (`registry` or `runner`, planner, oralizer, default policy; `timeline`: the hosts'
 * Redis timelines, e.g. a RedisTimelineReader, for evidence), and how.
 */
export interface BullmqDelegationConsumerOptions extends RunnerChoice {
  url: string;
  redisOptions?: RedisOptions;
  /** Key prefix shared with the producers. Default `venus:`. */
  prefix?: string;
  now?: () => number;
  /** Jobs this process runs at once. Default 16. */
  concurrency?: number;
  /**
   * How long a worker's job lock lasts without renewal (renewed every half of it). A worker that
   * dies leaves its job locked this long, then the next stalled check hands it to another worker.
   * BullMQ's default, 30 s, suits production; tests use ~2 s.
   */
  lockDurationMs?: number;
  /** How often each worker looks for stalled jobs. Default 30 s; tests ~1 s. */
  stalledIntervalMs?: number;
  /** Times a job may be recovered from a dead worker before it fails. Default 2. */
  maxStalledCount?: number;
  /** How long close() lets running work finish before aborting it for another worker to retry. Default 10 s. */
  drainMs?: number;
  progressFirstMs?: number;
  progressEveryMs?: number;
  resultTtlMs?: number;
  /** Approximate MAXLEN of an events stream, as on the producer. Default 100,000. */
  eventsMaxLen?: number;
  /** Redis trouble and jobs that failed for good; the consumer carries on. Default: the logger, at most once per kind per few seconds. */
  onError?(error: unknown): void;
  /** Each run this process took to an end (the harness's `venus_harness_runs_total`). */
  onRunEnded?(outcome: 'completed' | 'failed'): void;
}

export type { DelegationRunLike };

/** Abort reason of work stopped by close(): the job goes back to the queue, not to its end. */
const CLOSING = new VenusError('session_closed', 'the harness is shutting down');

interface ActiveWork {
  controller: AbortController;
  done: Promise<unknown>;
}

/**
 * The harness side of the BullMQ delegation queue: a BullMQ Worker whose processor runs each
 * delegation through DelegationRunner (plan, run, oralize) under the job's AbortSignal and the
 * request deadline, writing RUNNING, progress notices, FAILED and the result to the submitting
 * host's events stream. Each outcome is recorded once per work id, however often the job runs.
 * Cancellation arrives on a pub/sub channel and aborts the job through `worker.cancelJob`.
 * A job whose worker died is picked up again after its lock expires (`lockDurationMs`).
 *
 * @example
 *   const consumer = new BullmqDelegationConsumer({ url, registry: new FunctionRegistry(createBuiltinFunctions()) });
 *   await consumer.waitUntilReady();
 *   process.on('SIGTERM', () => void consumer.close());
 */
export class BullmqDelegationConsumer {
  readonly workerId = randomUUID();
  readonly #runner: DelegationRunLike;
  readonly #redis: Redis;
  readonly #subscriber: Redis;
  readonly #workerConnection: Redis;
  readonly #scripts: DelegationScripts;
  readonly #worker: Worker<DelegationJob>;
  readonly #progressFirstMs: number;
  readonly #progressEveryMs: number;
  readonly #drainMs: number;
  readonly #onRunEnded: ((outcome: 'completed' | 'failed') => void) | undefined;
  readonly #active = new Map<string, ActiveWork>();
  readonly #subscribed: Promise<unknown>;
  #closing: Promise<void> | null = null;
  /** Set once close() has aborted running work: anything that starts after it is aborted at once. */
  #abortingAll = false;

  /** Keys, clock, result TTL and error sink, as the other side of the queue reads them. */
  readonly #side: QueueSide;

  constructor(options: BullmqDelegationConsumerOptions) {
    this.#side = queueSide('consumer', options);
    this.#progressFirstMs = options.progressFirstMs ?? DELEGATION_LIMITS.progressFirstMs;
    this.#progressEveryMs = options.progressEveryMs ?? DELEGATION_LIMITS.progressEveryMs;
    this.#drainMs = options.drainMs ?? 10_000;
    this.#onRunEnded = options.onRunEnded;
    this.#runner = runnerFrom(
      'a delegation consumer',
      options,
      { now: this.#side.now, resultTtlMs: this.#side.resultTtlMs },
      (e) => this.#side.onError(e),
    );

    const name = `delegation-consumer:${this.workerId}`;
    this.#redis = new Redis(options.url, { connectionName: name, enableAutoPipelining: true, ...options.redisOptions });
    this.#redis.on('error', this.#side.onError);
    this.#scripts = defineDelegationScripts(this.#redis, {
      maxLen: options.eventsMaxLen ?? 100_000,
      ttlMs: Math.max(this.#side.resultTtlMs, DELEGATION_LIMITS.requestTimeoutMs) * 2,
    });

    // Subscribing waits out a Redis that is not up yet instead of failing the harness's start.
    this.#subscriber = new Redis(options.url, {
      connectionName: `${name}:cancel`,
      ...options.redisOptions,
      maxRetriesPerRequest: null,
    });
    this.#subscriber.on('error', this.#side.onError);
    this.#subscriber.on('message', (_channel: string, workId: string) => this.#abortJob(workId));
    // A cancel published while this connection was down is caught by re-reading the markers.
    this.#subscriber.on('ready', () => void this.#recheckCancelMarkers());
    this.#subscribed = this.#subscriber.subscribe(this.#side.keys.cancelChannel);

    this.#workerConnection = new Redis(options.url, {
      connectionName: `${name}:worker`,
      ...options.redisOptions,
      maxRetriesPerRequest: null,
    });
    this.#workerConnection.on('error', this.#side.onError);
    this.#worker = new Worker<DelegationJob>(
      this.#side.keys.queueName,
      (job, token, signal) => this.#process(job, token, signal),
      {
        connection: this.#workerConnection,
        prefix: this.#side.keys.bullPrefix,
        concurrency: Math.max(1, options.concurrency ?? 16),
        lockDuration: options.lockDurationMs ?? 30_000,
        stalledInterval: options.stalledIntervalMs ?? 30_000,
        maxStalledCount: options.maxStalledCount ?? 2,
      },
    );
    this.#worker.on('error', this.#side.onError);
    this.#worker.on('failed', (job, error) => {
      if (job !== undefined) void this.#failedForGood(job, error).catch(this.#side.onError);
    });
  }

  /** Resolves once the worker and the cancel subscription are connected. */
  async waitUntilReady(): Promise<void> {
    await Promise.all([this.#worker.waitUntilReady(), this.#subscribed]);
  }

  /** Jobs this process is running now, by work id. */
  activeWorkIds(): string[] {
    return [...this.#active.keys()];
  }

  /**
   * Stops taking jobs, lets running work finish for up to `drainMs`, then aborts the rest without
   * ending it: it goes back to the queue and another harness process runs it again.
   *
   * BullMQ's Worker.close() still processes a job that a fetch already in flight brings in (its
   * blocking wait may return after closing began; often it is woken by the very job a CLOSING
   * abort just handed back), and it waits for that job. Such late work is handed back untouched
   * before it starts, or aborted at once if it started during the abort, so close() always ends.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      const closed = this.#worker.close();
      const drained = Promise.all([...this.#active.values()].map((work) => work.done));
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([drained, new Promise((resolve) => (timer = setTimeout(resolve, this.#drainMs)))]);
      clearTimeout(timer);
      this.#abortingAll = true;
      for (const work of this.#active.values()) work.controller.abort(CLOSING);
      await closed.catch(this.#side.onError);
      await this.#subscriber.quit().catch(() => this.#subscriber.disconnect());
      await this.#redis.quit().catch(() => this.#redis.disconnect());
      await this.#workerConnection.quit().catch(() => this.#workerConnection.disconnect());
    })();
    return this.#closing;
  }

  async #process(job: Job<DelegationJob>, token: string | undefined, signal: AbortSignal | undefined): Promise<string> {
    // Fetched after close() began (see close()): back to the queue without counting an attempt.
    if (this.#closing !== null) return this.#handBack(job, token);
    const parsed = DelegationJobSchema.safeParse(job.data);
    if (!parsed.success) throw new UnrecoverableError(`malformed delegation job: ${z.prettifyError(parsed.error)}`);
    const { request, eventsKey, acceptedAtMs, deadlineAtMs, traceparent } = parsed.data;
    const { workId, session, incarnation } = request;
    const keys = this.#keysOf(request, eventsKey);
    const { verdict } = await this.#scripts.start(keys, {
      workId,
      workerId: this.workerId,
      resultTtlMs: this.#side.resultTtlMs,
      retryEvent: JSON.stringify({
        kind: 'state',
        session,
        incarnation,
        workId,
        state: 'QUEUED',
        reason: 'retry: the previous attempt was lost',
      } satisfies WorkEvent),
    });
    if (verdict !== 'run') return verdict;

    const controller = new AbortController();
    const onJobAbort = (): void => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onJobAbort, { once: true });
    const timeout = setTimeout(
      () => controller.abort(new VenusError('function_timeout', `no result within ${deadlineAtMs - acceptedAtMs} ms`)),
      Math.max(0, deadlineAtMs - this.#side.now()),
    );
    let settle!: () => void;
    const done = new Promise<void>((resolve) => {
      settle = resolve;
    });
    this.#active.set(workId, { controller, done });
    if (signal?.aborted) onJobAbort();
    // Started while close() was aborting: that pass missed it, and close() would wait on it for ever.
    if (this.#abortingAll) controller.abort(CLOSING);

    // Sent at once, not chained: one connection runs its commands in order, so RUNNING and the
    // progress notices reach the stream before the result without a round trip each.
    const emitted: Promise<unknown>[] = [];
    const emit = (state: string, event: WorkEvent): void => {
      emitted.push(this.#scripts.emit([keys[0], keys[1]], state, [JSON.stringify(event)]).catch(this.#side.onError));
    };
    // RUNNING waits one turn of the event loop: work that finishes within it sends RUNNING along
    // with its result in one script call instead of two.
    let running: WorkEvent | null = null;
    const flushRunning = (): void => {
      if (running !== null) emit('RUNNING', running);
      running = null;
    };
    let progressMessage: string | undefined;
    let functionName: string | undefined;
    let stopProgress: (() => void) | undefined;
    let outcome: RunOutcome;
    const traced = traceJob(traceparent, request);
    try {
      outcome = await this.#runner.run(request, {
        signal: controller.signal,
        onPlanned: (name) => {
          functionName = name;
          traced.planned(name);
          running = { kind: 'state', session, incarnation, workId, state: 'RUNNING', functionName: name };
          setImmediate(flushRunning);
          stopProgress = startProgressTicker({
            firstMs: this.#progressFirstMs,
            everyMs: this.#progressEveryMs,
            onTick: () => {
              flushRunning();
              emit('', {
                kind: 'progress',
                session,
                incarnation,
                workId,
                message: progressMessage ?? `Still working on ${functionName ?? 'it'}`,
                elapsedMs: Math.max(0, this.#side.now() - acceptedAtMs),
              });
            },
          });
        },
        onProgress: (message) => {
          progressMessage = message;
        },
      });
      traced.outcome(outcome.ok, outcome.ok ? undefined : outcome.reason);
    } finally {
      traced.end();
      stopProgress?.();
      clearTimeout(timeout);
      signal?.removeEventListener('abort', onJobAbort);
      this.#active.delete(workId);
      settle();
    }
    if (controller.signal.reason === CLOSING) return this.#handBack(job, token);
    const before = running === null ? [] : [running];
    running = null;
    await Promise.all([...emitted, this.#record(request, keys, outcome, before)]);
    this.#onRunEnded?.(outcome.ok ? 'completed' : 'failed');
    return outcome.ok ? 'completed' : 'failed';
  }

  /**
   * Puts the job back in the queue without spending an attempt; another harness runs it from the
   * start. Due at once, so its marker wakes a waiting worker; this closing one fetches no more.
   */
  async #handBack(job: Job<DelegationJob>, token: string | undefined): Promise<never> {
    await job.moveToDelayed(Date.now(), token);
    throw new DelayedError();
  }

  /** Appends `before`, FAILED (when it failed) and the result, unless the work already ended or is cancelled. */
  async #record(request: DelegationRequest, keys: WorkKeys, outcome: RunOutcome, before: WorkEvent[] = []) {
    const { workId, session, incarnation } = request;
    const events = [...before];
    if (!outcome.ok) {
      events.push({
        kind: 'state',
        session,
        incarnation,
        workId,
        state: 'FAILED',
        reason: outcome.reason,
        ...(outcome.functionName ? { functionName: outcome.functionName } : {}),
      });
    }
    events.push({ kind: 'result', session, incarnation, workId, result: outcome.result });
    await this.#scripts.finish(
      keys,
      { workId, resultTtlMs: this.#side.resultTtlMs, end: 'result', state: outcome.ok ? 'COMPLETED' : 'FAILED' },
      events.map((event) => JSON.stringify(event)),
    );
  }

  /** A job BullMQ gave up on (attempts spent, or stalled too often) still owes its session an answer. */
  async #failedForGood(job: Job<DelegationJob>, error: Error): Promise<void> {
    if ((await job.getState()) !== 'failed') return;
    const parsed = DelegationJobSchema.safeParse(job.data);
    if (!parsed.success) {
      this.#side.onError(new Error(`malformed delegation job ${job.id} failed: ${error.message}`));
      return;
    }
    const { request, eventsKey } = parsed.data;
    const reason = new VenusError('function_failed', 'something went wrong', { cause: error });
    const outcome = await this.#runner.run(request, { signal: AbortSignal.abort(reason) });
    await this.#record(request, this.#keysOf(request, eventsKey), outcome);
  }

  /** BullMQ tracks a job before its processor starts, so this reaches work that has not begun to run too. */
  #abortJob(workId: string): void {
    this.#worker.cancelJob(jobIdFor(workId), 'cancelled');
  }

  async #recheckCancelMarkers(): Promise<void> {
    for (const workId of this.#active.keys()) {
      const cancelled = await this.#redis.hexists(this.#side.keys.work(workId), 'cancel').catch(() => 0);
      if (cancelled === 1) this.#abortJob(workId);
    }
  }

  #keysOf(request: DelegationRequest, eventsKey: string): WorkKeys {
    return [
      this.#side.keys.work(request.workId),
      eventsKey,
      this.#side.keys.sessionSlots(request.session),
      this.#side.keys.tenantSlots(request.tenant),
    ];
  }
}
