import { randomUUID } from 'node:crypto';
import {
  createLogger,
  DELEGATION_LIMITS,
  type DelegationExecutor,
  type DelegationRequest,
  DelegationRequestSchema,
  toVenusError,
  VenusError,
  type WorkEvent,
  type WorkEventListener,
  type WorkState,
  WorkStateSchema,
} from '@venus/protocol';
import { traceparentOf } from '@venus/protocol/node';
import { Queue } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import { z } from 'zod';
import { AdoptedWork } from './adopted-work.ts';
import type { DelegationJob } from './delegation-job.ts';
import { jobIdFor } from './delegation-keys.ts';
import { type DelegationScripts, defineDelegationScripts, type WorkKeys } from './delegation-scripts.ts';
import { type QueueSide, queueSide } from './queue-options.ts';
import { WorkEventReader } from './work-event-reader.ts';

const log = createLogger('harness.delegation-producer');

export interface BullmqDelegationProducerOptions {
  /** Redis URL, e.g. redis://127.0.0.1:6379. */
  url: string;
  /** Extra ioredis options for the producer's connections. */
  redisOptions?: RedisOptions;
  /** Key prefix shared with the harness consumers. Default `venus:`. */
  prefix?: string;
  /** Names this host's events stream. Default: a random id per producer. */
  hostId?: string;
  requestTimeoutMs?: number;
  resultTtlMs?: number;
  maxInFlightPerSession?: number;
  /** In-flight delegations of one tenant across every host. Default 1,000. */
  maxInFlightPerTenant?: number;
  /** BullMQ attempts per job: a retry happens only when a worker could not record an outcome. Default 3. */
  attempts?: number;
  /** First exponential backoff delay between attempts. Default 500 ms. */
  backoffMs?: number;
  /** Finished jobs BullMQ keeps; the work record and events stream are the lasting history. */
  keepCompleted?: number;
  keepFailed?: number;
  /** Approximate MAXLEN of the events stream. Default 100,000. */
  eventsMaxLen?: number;
  /** How long one XREAD blocks before asking again. */
  blockMs?: number;
  now?: () => number;
  onListenerError?(error: unknown, event: WorkEvent): void;
  /** Connection trouble and malformed stream entries; the producer carries on. Default: the logger, at most once per kind per few seconds. */
  onError?(error: unknown): void;
}

/** What the work record says about a delegation, for operators and recovery. */
export interface DelegationRecord {
  workId: string;
  state: WorkState;
  session: string;
  tenant: string;
  incarnation: number;
  acceptedAtMs: number;
  attempts: number;
  /** `${workId}#${n}@${workerId}` of the latest attempt. */
  attempt?: string;
  cancelReason?: string;
  end?: 'result' | 'cancelled' | 'rejected';
}

const DelegationRecordFieldsSchema = z.object({
  state: WorkStateSchema,
  session: z.string(),
  tenant: z.string(),
  incarnation: z.coerce.number().int(),
  acceptedAt: z.coerce.number(),
  attempts: z.coerce.number().int().default(0),
  attempt: z.string().optional(),
  cancel: z.string().optional(),
  end: z.enum(['result', 'cancelled', 'rejected']).optional(),
  events: z.string(),
});

/** After the deadline a slot nobody released is reclaimed by the next acceptance. */
const SLOT_GRACE_MS = 60_000;

/**
 * The session host's side of the BullMQ delegation queue: `submit` records the work and adds a job
 * (job id = work id, so resubmitting is a no-op) under per-session and per-tenant in-flight limits
 * counted in Redis; `cancel` marks the work and tells harness workers to abort it (a job still
 * waiting is removed at once); events come back on this host's Redis stream, read by one blocking
 * connection and handed to listeners in stream order. Jobs are run by BullmqDelegationConsumer in
 * harness processes.
 *
 * @example
 *   const executor = new BullmqDelegationProducer({ url: process.env.REDIS_URL!, prefix: 'venus:' });
 *   executor.subscribe((event) => host.onWorkEvent(event));
 *   await executor.submit(request); // resolves once the job is in Redis
 */
export class BullmqDelegationProducer implements DelegationExecutor {
  readonly hostId: string;
  readonly #redis: Redis;
  readonly #queueRedis: Redis;
  readonly #scripts: DelegationScripts;
  readonly #queue: Queue;
  readonly #reader: WorkEventReader;
  readonly #adopted: AdoptedWork;
  readonly #listeners = new Set<WorkEventListener>();
  readonly #requestTimeoutMs: number;
  readonly #maxInFlightPerSession: number;
  readonly #maxInFlightPerTenant: number;
  readonly #onListenerError: (error: unknown, event: WorkEvent) => void;
  #closed = false;

  /** Keys, clock, result TTL and error sink, as the other side of the queue reads them. */
  readonly #side: QueueSide;

  constructor(options: BullmqDelegationProducerOptions) {
    this.hostId = options.hostId ?? randomUUID();
    this.#side = queueSide('producer', options);
    this.#requestTimeoutMs = options.requestTimeoutMs ?? DELEGATION_LIMITS.requestTimeoutMs;
    this.#maxInFlightPerSession = options.maxInFlightPerSession ?? DELEGATION_LIMITS.maxInFlightPerSession;
    this.#maxInFlightPerTenant = options.maxInFlightPerTenant ?? 1_000;
    this.#onListenerError =
      options.onListenerError ??
      ((error, event) =>
        log.error({ err: error, kind: event.kind, workId: event.workId }, 'work event listener threw'));

    this.#redis = new Redis(options.url, {
      connectionName: `delegation-producer:${this.hostId}`,
      enableAutoPipelining: true,
      ...options.redisOptions,
    });
    this.#redis.on('error', this.#side.onError);
    this.#queueRedis = new Redis(options.url, {
      connectionName: `delegation-queue:${this.hostId}`,
      ...options.redisOptions,
    });
    this.#queueRedis.on('error', this.#side.onError);
    this.#scripts = defineDelegationScripts(this.#redis, {
      maxLen: options.eventsMaxLen ?? 100_000,
      ttlMs: Math.max(this.#side.resultTtlMs, this.#requestTimeoutMs) * 2,
    });
    const attempts = options.attempts ?? 3;
    this.#queue = new Queue(this.#side.keys.queueName, {
      connection: this.#queueRedis,
      prefix: this.#side.keys.bullPrefix,
      defaultJobOptions: {
        attempts,
        backoff: { type: 'exponential', delay: options.backoffMs ?? 500 },
        removeOnComplete: { count: options.keepCompleted ?? 1_000 },
        removeOnFail: { count: options.keepFailed ?? 5_000 },
      },
    });
    this.#queue.on('error', this.#side.onError);

    const blocking = new Redis(options.url, {
      connectionName: `delegation-events:${this.hostId}`,
      ...options.redisOptions,
      maxRetriesPerRequest: null,
    });
    blocking.on('error', this.#side.onError);
    this.#reader = new WorkEventReader({
      redis: blocking,
      key: this.#side.keys.events(this.hostId),
      ...(options.blockMs === undefined ? {} : { blockMs: options.blockMs }),
      onEvent: (event) => this.#deliver(event),
      onError: this.#side.onError,
    });
    this.#reader.start();
    this.#adopted = new AdoptedWork({
      url: options.url,
      ...(options.redisOptions ? { redisOptions: options.redisOptions } : {}),
      onEvent: (event) => this.#deliver(event),
      onError: this.#side.onError,
    });
  }

  /** Follows the events of work submitted by another host (its session failed over to this one). */
  async adopt(work: { workId: string; session: string; incarnation: number }): Promise<void> {
    const record = await this.#readRecord(work.workId);
    if (record === null || record.session !== work.session) return;
    if (record.eventsKey === this.#side.keys.events(this.hostId)) return;
    this.#adopted.adopt(record.eventsKey, work.workId, work.incarnation);
  }

  async submit(request: DelegationRequest): Promise<void> {
    if (this.#closed) throw new VenusError('session_closed', 'the delegation executor is closed');
    const parsed = DelegationRequestSchema.safeParse(request);
    if (!parsed.success) throw new VenusError('invalid_event', z.prettifyError(parsed.error), { cause: parsed.error });
    const accepted = parsed.data;
    const { workId, session, tenant, incarnation } = accepted;
    const nowMs = this.#side.now();
    const keys = this.#slotKeys(workId, this.#side.keys.events(this.hostId), session, tenant);
    const verdict = await this.#scripts.accept(keys, {
      workId,
      nowMs,
      slotDeadlineMs: nowMs + this.#requestTimeoutMs + SLOT_GRACE_MS,
      sessionLimit: this.#maxInFlightPerSession,
      tenantLimit: this.#maxInFlightPerTenant,
      recordTtlMs: this.#requestTimeoutMs + this.#side.resultTtlMs + SLOT_GRACE_MS,
      session,
      tenant,
      incarnation,
      queuedEvent: JSON.stringify({ kind: 'state', session, incarnation, workId, state: 'QUEUED' } satisfies WorkEvent),
    });
    let eventsKey = keys[1];
    if (verdict === 'duplicate') {
      // Either a resubmission, or this submit's own accept ran and its reply was lost (Redis went
      // away between them and the client sent the script again): then the work is recorded, its
      // QUEUED announced, and its job never added. A work that has neither started nor ended gets
      // its job; BullMQ keeps one job per id, so a real resubmission of a waiting job adds nothing.
      const record = await this.#readRecord(workId);
      const untouched =
        record !== null &&
        record.session === session &&
        record.end === undefined &&
        record.cancelReason === undefined &&
        record.attempts === 0;
      if (!untouched) return;
      eventsKey = record.eventsKey;
    }
    if (verdict === 'session_full') {
      throw new VenusError(
        'delegate_limit_reached',
        `session ${session} already has ${this.#maxInFlightPerSession} delegations in flight`,
      );
    }
    if (verdict === 'tenant_full') {
      throw new VenusError(
        'delegate_limit_reached',
        `tenant ${tenant} already has ${this.#maxInFlightPerTenant} delegations in flight`,
      );
    }
    const job: DelegationJob = {
      request: accepted,
      eventsKey,
      acceptedAtMs: nowMs,
      deadlineAtMs: nowMs + this.#requestTimeoutMs,
      // The caller's active span (DelegationTracing's enqueue span): the harness continues its trace.
      ...optionalTraceparent(),
    };
    try {
      await this.#queue.add('delegation', job, { jobId: jobIdFor(workId) });
    } catch (error) {
      const failure = toVenusError(error);
      const failed: WorkEvent = {
        kind: 'state',
        session,
        incarnation,
        workId,
        state: 'FAILED',
        reason: `${failure.code}: the job could not be queued`,
      };
      await this.#scripts
        .finish(
          [keys[0], eventsKey, keys[2], keys[3]],
          { workId, resultTtlMs: this.#side.resultTtlMs, end: 'rejected', state: 'FAILED' },
          [JSON.stringify(failed)],
        )
        .catch(this.#side.onError);
      throw failure;
    }
  }

  async cancel(workId: string, reason: string): Promise<void> {
    const record = await this.#readRecord(workId);
    if (record === null || record.end !== undefined) {
      throw new VenusError('work_not_found', `no queued or running work ${workId}`);
    }
    const { session, incarnation, tenant } = record;
    const keys = this.#slotKeys(workId, record.eventsKey, session, tenant);
    const identity = { kind: 'state', session, incarnation, workId, reason } as const;
    const marked = await this.#scripts.cancel([keys[0], keys[1]], {
      reason,
      cancellingEvent: JSON.stringify({ ...identity, state: 'CANCELLING' } satisfies WorkEvent),
      cancelledEvent: JSON.stringify({ ...identity, state: 'CANCELLED' } satisfies WorkEvent),
      channel: this.#side.keys.cancelChannel,
      workId,
    });
    if (marked === 'missing' || marked === 'finished') {
      throw new VenusError('work_not_found', `no queued or running work ${workId}`);
    }
    // A job nobody holds is removed and ended here; a held one ends when its worker stops it.
    const removed = await this.#queue.remove(jobIdFor(workId));
    if (removed === 1) {
      await this.#scripts.finish(keys, { workId, resultTtlMs: this.#side.resultTtlMs, end: '', state: '' }, []);
    }
  }

  subscribe(listener: WorkEventListener): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** The persisted record of one delegation, or null once it has expired (result TTL after its end). */
  async getWorkState(workId: string): Promise<DelegationRecord | null> {
    const record = await this.#readRecord(workId);
    if (record === null) return null;
    const { eventsKey: _, ...rest } = record;
    return rest;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#listeners.clear();
    await this.#reader.stop();
    await this.#adopted.close();
    await this.#queue.close().catch(this.#side.onError);
    await this.#redis.quit().catch(() => this.#redis.disconnect());
    await this.#queueRedis.quit().catch(() => this.#queueRedis.disconnect());
  }

  async #readRecord(workId: string): Promise<(DelegationRecord & { eventsKey: string }) | null> {
    const fields = await this.#redis.hgetall(this.#side.keys.work(workId));
    if (Object.keys(fields).length === 0) return null;
    const parsed = DelegationRecordFieldsSchema.safeParse(fields);
    if (!parsed.success) throw new VenusError('internal_error', `work record ${workId} is malformed`);
    const f = parsed.data;
    const record: DelegationRecord & { eventsKey: string } = {
      workId,
      state: f.state,
      session: f.session,
      tenant: f.tenant,
      incarnation: f.incarnation,
      acceptedAtMs: f.acceptedAt,
      attempts: f.attempts,
      eventsKey: f.events,
    };
    if (f.attempt !== undefined) record.attempt = f.attempt;
    if (f.cancel !== undefined) record.cancelReason = f.cancel;
    if (f.end !== undefined) record.end = f.end;
    return record;
  }

  #slotKeys(workId: string, eventsKey: string, session: string, tenant: string): WorkKeys {
    return [
      this.#side.keys.work(workId),
      eventsKey,
      this.#side.keys.sessionSlots(session),
      this.#side.keys.tenantSlots(tenant),
    ];
  }

  #deliver(event: WorkEvent): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch (error) {
        this.#onListenerError(error, event);
      }
    }
  }
}

function optionalTraceparent(): { traceparent?: string } {
  const traceparent = traceparentOf();
  return traceparent === undefined ? {} : { traceparent };
}
