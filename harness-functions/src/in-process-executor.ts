import {
  createLogger,
  DELEGATION_LIMITS,
  type DelegationExecutor,
  type DelegationRequest,
  DelegationRequestSchema,
  VenusError,
  type WorkEvent,
  type WorkEventListener,
  type WorkState,
} from '@venus/protocol';
import { z } from 'zod';
import { type DelegationRunLike, type RunnerChoice, type RunOutcome, runnerFrom } from './delegation-runner.ts';
import { startProgressTicker } from './progress-ticker.ts';

const log = createLogger('harness.in-process');

/** What to run (`registry` or `runner`, planner, oralizer, default policy; `timeline`: the host's store, for evidence), and how. */
export interface InProcessExecutorOptions extends RunnerChoice {
  now?: () => number;
  requestTimeoutMs?: number;
  resultTtlMs?: number;
  progressFirstMs?: number;
  progressEveryMs?: number;
  maxInFlightPerSession?: number;
  /** Work running at once across all sessions; the rest waits QUEUED. */
  concurrency?: number;
  /** Where a listener's exception goes; the executor itself carries on. Default: an error in the log. */
  onListenerError?(error: unknown, event: WorkEvent): void;
}

interface WorkRecord {
  request: DelegationRequest;
  state: 'QUEUED' | 'RUNNING' | 'CANCELLING';
  started: boolean;
  controller: AbortController;
  acceptedAtMs: number;
  timeout: ReturnType<typeof setTimeout>;
  functionName?: string;
  progressMessage?: string;
  cancelReason?: string;
  stopProgress?: () => void;
  settled: Promise<void>;
  markSettled(): void;
}

/** How many finished work ids are remembered, so a resubmitted id stays a no-op. */
const REMEMBERED_FINISHED = 10_000;

/**
 * The background loop inside the host process (the embedded default): accepts delegations, runs
 * them on the event loop with a global concurrency cap and a per-session in-flight cap, and reports
 * QUEUED, RUNNING, progress notices, FAILED, CANCELLING/CANCELLED and results to subscribers.
 * Delivery states (COMPLETED onwards) belong to the session host. Planning, function execution and
 * oralizing live in DelegationRunner, shared with queue-backed executors.
 *
 * @example
 *   const executor = new InProcessExecutor({ registry: new FunctionRegistry(createBuiltinFunctions()) });
 *   executor.subscribe((event) => console.log(event.kind, event.kind === 'state' ? event.state : ''));
 *   await executor.submit(request); // resolves once QUEUED; the result arrives as an event later
 */
export class InProcessExecutor implements DelegationExecutor {
  readonly #runner: DelegationRunLike;
  readonly #now: () => number;
  readonly #requestTimeoutMs: number;
  readonly #resultTtlMs: number;
  readonly #progressFirstMs: number;
  readonly #progressEveryMs: number;
  readonly #maxInFlightPerSession: number;
  readonly #concurrency: number;
  readonly #onListenerError: (error: unknown, event: WorkEvent) => void;

  readonly #listeners = new Set<WorkEventListener>();
  readonly #work = new Map<string, WorkRecord>();
  readonly #finished = new Map<string, number>();
  readonly #inFlightBySession = new Map<string, number>();
  readonly #pending: WorkRecord[] = [];
  #running = 0;
  #pumpScheduled = false;
  #closed = false;

  constructor(options: InProcessExecutorOptions) {
    this.#now = options.now ?? Date.now;
    this.#resultTtlMs = options.resultTtlMs ?? DELEGATION_LIMITS.resultTtlMs;
    this.#runner = runnerFrom(
      'an in-process executor',
      options,
      { now: this.#now, resultTtlMs: this.#resultTtlMs },
      (error, request) =>
        log.warn({ err: error, workId: request.workId }, 'evidence could not be read; running without'),
    );
    this.#requestTimeoutMs = options.requestTimeoutMs ?? DELEGATION_LIMITS.requestTimeoutMs;
    this.#progressFirstMs = options.progressFirstMs ?? DELEGATION_LIMITS.progressFirstMs;
    this.#progressEveryMs = options.progressEveryMs ?? DELEGATION_LIMITS.progressEveryMs;
    this.#maxInFlightPerSession = options.maxInFlightPerSession ?? DELEGATION_LIMITS.maxInFlightPerSession;
    this.#concurrency = Math.max(1, options.concurrency ?? 64);
    this.#onListenerError =
      options.onListenerError ??
      ((error, event) =>
        log.error({ err: error, kind: event.kind, workId: event.workId }, 'work event listener threw'));
  }

  async submit(request: DelegationRequest): Promise<void> {
    if (this.#closed) throw new VenusError('session_closed', 'the delegation executor is closed');
    const parsed = DelegationRequestSchema.safeParse(request);
    if (!parsed.success) throw new VenusError('invalid_event', z.prettifyError(parsed.error), { cause: parsed.error });
    const accepted = parsed.data;
    this.#forgetOldFinished();
    if (this.#work.has(accepted.workId) || this.#finished.has(accepted.workId)) return;
    const inFlight = this.#inFlightBySession.get(accepted.session) ?? 0;
    if (inFlight >= this.#maxInFlightPerSession) {
      throw new VenusError(
        'delegate_limit_reached',
        `session ${accepted.session} already has ${inFlight} delegations in flight (limit ${this.#maxInFlightPerSession})`,
      );
    }
    let markSettled = (): void => {};
    const settled = new Promise<void>((resolve) => {
      markSettled = resolve;
    });
    const record: WorkRecord = {
      request: accepted,
      state: 'QUEUED',
      started: false,
      controller: new AbortController(),
      acceptedAtMs: this.#now(),
      timeout: setTimeout(() => this.#timeOut(record), this.#requestTimeoutMs),
      settled,
      markSettled,
    };
    this.#work.set(accepted.workId, record);
    this.#inFlightBySession.set(accepted.session, inFlight + 1);
    this.#emitState(record, 'QUEUED');
    this.#pending.push(record);
    this.#schedulePump();
  }

  async cancel(workId: string, reason: string): Promise<void> {
    const record = this.#work.get(workId);
    if (record === undefined) throw new VenusError('work_not_found', `no queued or running work ${workId}`);
    if (record.state !== 'CANCELLING') {
      record.state = 'CANCELLING';
      record.cancelReason = reason;
      record.stopProgress?.();
      this.#emitState(record, 'CANCELLING', { reason });
      if (record.started) {
        record.controller.abort(new DOMException(reason, 'AbortError'));
      } else {
        this.#pending.splice(this.#pending.indexOf(record), 1);
        this.#finish(record, null);
      }
    }
    await record.settled;
  }

  subscribe(listener: WorkEventListener): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const record of this.#pending.splice(0)) this.#finish(record, null);
    const running = [...this.#work.values()];
    for (const record of running) record.controller.abort(new DOMException('executor closed', 'AbortError'));
    await Promise.all(running.map((record) => record.settled));
    this.#listeners.clear();
  }

  #schedulePump(): void {
    if (this.#pumpScheduled) return;
    this.#pumpScheduled = true;
    // A macrotask, so that submit never runs any of the work before its caller resumes.
    setImmediate(() => {
      this.#pumpScheduled = false;
      this.#pump();
    });
  }

  #pump(): void {
    while (!this.#closed && this.#running < this.#concurrency) {
      const record = this.#pending.shift();
      if (record === undefined) return;
      void this.#execute(record);
    }
  }

  async #execute(record: WorkRecord): Promise<void> {
    record.started = true;
    this.#running++;
    let outcome: RunOutcome | null = null;
    try {
      outcome = await this.#runner.run(record.request, {
        signal: record.controller.signal,
        onPlanned: (functionName) => this.#markRunning(record, functionName),
        onProgress: (message) => {
          record.progressMessage = message;
        },
      });
    } finally {
      this.#running--;
      this.#finish(record, outcome);
      this.#pump();
    }
  }

  #markRunning(record: WorkRecord, functionName: string): void {
    if (record.state !== 'QUEUED' || this.#closed) return;
    record.state = 'RUNNING';
    record.functionName = functionName;
    this.#emitState(record, 'RUNNING', { functionName });
    record.stopProgress = startProgressTicker({
      firstMs: this.#progressFirstMs,
      everyMs: this.#progressEveryMs,
      onTick: () => this.#emitProgress(record),
    });
  }

  #emitProgress(record: WorkRecord): void {
    if (record.state !== 'RUNNING') return;
    const { session, incarnation, workId } = record.request;
    this.#emit({
      kind: 'progress',
      session,
      incarnation,
      workId,
      message: record.progressMessage ?? `Still working on ${record.functionName ?? 'it'}`,
      elapsedMs: Math.max(0, this.#now() - record.acceptedAtMs),
    });
  }

  /** The request-wide deadline: work still queued fails at once, running work is aborted. */
  #timeOut(record: WorkRecord): void {
    const error = new VenusError('function_timeout', `no result within ${this.#requestTimeoutMs} ms`);
    record.controller.abort(error);
    if (!record.started && record.state === 'QUEUED') {
      this.#pending.splice(this.#pending.indexOf(record), 1);
      void this.#execute(record);
    }
  }

  /** Ends a record exactly once; `outcome` is null when the work never ran or the executor is closing. */
  #finish(record: WorkRecord, outcome: RunOutcome | null): void {
    const { workId, session } = record.request;
    if (this.#work.get(workId) !== record) return;
    clearTimeout(record.timeout);
    record.stopProgress?.();
    this.#work.delete(workId);
    this.#finished.set(workId, this.#now());
    const remaining = (this.#inFlightBySession.get(session) ?? 1) - 1;
    if (remaining > 0) this.#inFlightBySession.set(session, remaining);
    else this.#inFlightBySession.delete(session);

    if (record.state === 'CANCELLING') {
      this.#emitState(record, 'CANCELLED', { reason: record.cancelReason ?? 'cancelled' });
    } else if (outcome !== null && !outcome.ok) {
      this.#emitState(record, 'FAILED', {
        reason: outcome.reason,
        ...(outcome.functionName ? { functionName: outcome.functionName } : {}),
      });
      this.#emitResult(record, outcome);
    } else if (outcome !== null) {
      this.#emitResult(record, outcome);
    }
    record.markSettled();
  }

  #emitResult(record: WorkRecord, outcome: RunOutcome): void {
    const { session, incarnation, workId } = record.request;
    this.#emit({ kind: 'result', session, incarnation, workId, result: outcome.result });
  }

  #emitState(record: WorkRecord, state: WorkState, extra: { reason?: string; functionName?: string } = {}): void {
    const { session, incarnation, workId } = record.request;
    this.#emit({ kind: 'state', session, incarnation, workId, state, ...extra });
  }

  #emit(event: WorkEvent): void {
    if (this.#closed) return;
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch (error) {
        this.#onListenerError(error, event);
      }
    }
  }

  #forgetOldFinished(): void {
    const horizon = this.#now() - this.#resultTtlMs;
    for (const [workId, finishedAtMs] of this.#finished) {
      if (finishedAtMs >= horizon && this.#finished.size <= REMEMBERED_FINISHED) break;
      this.#finished.delete(workId);
    }
  }
}
