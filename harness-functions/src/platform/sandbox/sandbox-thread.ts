import { Worker } from 'node:worker_threads';
import { FUNCTIONS_LIMITS, type InvocationError } from '@venus/protocol';
import { egressFetch } from '../http/egress-guard.ts';
import { type SandboxFetchRequest, sandboxFetch } from './sandbox-egress.ts';

/**
 * How deep a reply may nest: far more than any result a voice assistant speaks from, far less than
 * what breaks a recursive JSON.stringify on a thread with a default stack (a relay frame, a log).
 */
export const MAX_OUTPUT_DEPTH = 64;

/** What the worker thread runs: `invoke` calls the function, `check` loads it, `parse` only compiles. */
export interface SandboxJob {
  id: number;
  mode: 'invoke' | 'check' | 'parse';
  source: string;
  /** Arguments as JSON text. */
  args: string;
  env: Record<string, string>;
  grants: { fetch: string[] };
  limits: { cpuMs: number; memoryMb: number };
  /** Bounds on the reply, enforced inside the thread (default: FUNCTIONS_LIMITS.maxOutputBytes, MAX_OUTPUT_DEPTH). */
  output?: { maxBytes: number; maxDepth: number };
  meta: { functionName: string; version: number; workId: string; session: string };
  /** Epoch ms; what `ctx.remainingMs()` counts down to. */
  deadlineAt: number;
}

export type SandboxOutcome =
  | { ok: true; value: string; logs: string[]; cpuMs: number }
  | { ok: false; error: InvocationError; logs: string[]; cpuMs?: number };

type WorkerMessage =
  | { type: 'ready' }
  | { type: 'log'; id: number; line: string }
  | { type: 'fetch'; id: number; op: number; request: SandboxFetchRequest }
  | { type: 'fetch-abort'; id: number; op: number }
  | ({ type: 'result'; id: number; cpuMs: number; retire?: boolean } & (
      | { ok: true; value: string }
      | { ok: false; error: InvocationError }
    ));

const WORKER_URL = new URL('./sandbox-worker.mjs', import.meta.url);

interface Running {
  job: SandboxJob;
  logs: string[];
  resolve(outcome: SandboxOutcome): void;
  timer: ReturnType<typeof setTimeout>;
  onAbort?: () => void;
  signal?: AbortSignal;
  /** The job's fetches in flight on this side, by the sandbox's op id. */
  fetches: Map<number, AbortController>;
}

export interface SandboxThreadOptions {
  stackSizeMb?: number;
  /**
   * What deployed code's `fetch` goes through (default: the platform's egress guard, egressFetch(),
   * which refuses private, loopback and link-local addresses).
   */
  fetch?: typeof fetch;
}

/**
 * One sandbox worker thread with V8 heap limits, running one job at a time. A heap blow-up, a
 * wall-clock overrun or a cancellation ends the thread (and only it); the job then fails with
 * `memory_limit`, `wall_timeout` or `cancelled`. The thread gets an empty environment, so even
 * code that escaped the vm context would find no parent secrets in `process.env`.
 *
 * @example
 *   const thread = new SandboxThread(64);
 *   await thread.ready;
 *   const outcome = await thread.run(job, { wallMs: 5000 });
 */
export class SandboxThread {
  readonly memoryMb: number;
  readonly ready: Promise<void>;
  #worker: Worker;
  #running: Running | undefined;
  #alive = true;
  #exitListeners = new Set<() => void>();
  readonly #fetch: typeof fetch;

  constructor(memoryMb: number, options: SandboxThreadOptions = {}) {
    this.memoryMb = memoryMb;
    this.#fetch = options.fetch ?? egressFetch();
    this.#worker = new Worker(WORKER_URL, {
      env: {},
      execArgv: ['--experimental-vm-modules', '--no-warnings'],
      resourceLimits: {
        maxOldGenerationSizeMb: memoryMb,
        maxYoungGenerationSizeMb: Math.max(2, Math.min(32, Math.floor(memoryMb / 4))),
        stackSizeMb: options.stackSizeMb ?? 4,
      },
    });
    this.#worker.unref();
    this.ready = new Promise<void>((resolve, reject) => {
      const onMessage = (message: WorkerMessage) => {
        if (message.type !== 'ready') return;
        this.#worker.off('message', onMessage);
        resolve();
      };
      this.#worker.on('message', onMessage);
      this.#worker.once('error', reject);
      this.#worker.once('exit', (code) => reject(new Error(`sandbox worker exited with code ${code} while starting`)));
    });
    // Observed by every caller that awaits `ready`; this only keeps an early failure from being unhandled.
    this.ready.catch(() => {});
    this.#worker.on('message', (message: WorkerMessage) => this.#onMessage(message));
    this.#worker.on('error', (error: Error & { code?: string }) => this.#onError(error));
    this.#worker.on('exit', () => this.#onExit());
  }

  get alive(): boolean {
    return this.#alive;
  }

  get busy(): boolean {
    return this.#running !== undefined;
  }

  onExit(listener: () => void): void {
    this.#exitListeners.add(listener);
  }

  run(job: SandboxJob, options: { wallMs: number; signal?: AbortSignal }): Promise<SandboxOutcome> {
    if (!this.#alive) {
      return Promise.resolve({
        ok: false,
        error: { code: 'function_error', message: 'sandbox worker is gone' },
        logs: [],
      });
    }
    if (this.#running !== undefined) throw new Error('a sandbox thread runs one job at a time');
    return new Promise<SandboxOutcome>((resolve) => {
      const running: Running = {
        job,
        logs: [],
        resolve,
        fetches: new Map(),
        timer: setTimeout(() => {
          this.#kill({
            code: 'wall_timeout',
            message: `the function ran past its ${options.wallMs} ms wall-clock limit`,
          });
        }, options.wallMs),
      };
      if (options.signal) {
        const signal = options.signal;
        if (signal.aborted) {
          clearTimeout(running.timer);
          resolve({ ok: false, error: { code: 'cancelled', message: 'the invocation was cancelled' }, logs: [] });
          return;
        }
        running.signal = signal;
        running.onAbort = () => this.#kill({ code: 'cancelled', message: 'the invocation was cancelled' });
        signal.addEventListener('abort', running.onAbort, { once: true });
      }
      this.#running = running;
      const output = job.output ?? { maxBytes: FUNCTIONS_LIMITS.maxOutputBytes, maxDepth: MAX_OUTPUT_DEPTH };
      this.#worker.postMessage({ type: 'job', job: { ...job, output } });
    });
  }

  async terminate(): Promise<void> {
    this.#alive = false;
    await this.#worker.terminate();
  }

  #onMessage(message: WorkerMessage): void {
    const running = this.#running;
    if (running === undefined || message.type === 'ready' || message.id !== running.job.id) return;
    if (message.type === 'log') {
      running.logs.push(message.line);
      return;
    }
    if (message.type === 'fetch') {
      this.#startFetch(running, message.op, message.request);
      return;
    }
    if (message.type === 'fetch-abort') {
      running.fetches.get(message.op)?.abort();
      running.fetches.delete(message.op);
      return;
    }
    if (message.retire === true) this.#alive = false;
    this.#settle(
      message.ok
        ? { ok: true, value: message.value, logs: running.logs, cpuMs: message.cpuMs }
        : { ok: false, error: message.error, logs: running.logs, cpuMs: message.cpuMs },
    );
  }

  #startFetch(running: Running, op: number, request: SandboxFetchRequest): void {
    const controller = new AbortController();
    running.fetches.set(op, controller);
    void sandboxFetch(request, running.job.grants.fetch, this.#fetch, controller.signal).then((outcome) => {
      if (this.#running !== running || !running.fetches.delete(op)) return;
      const value = JSON.stringify(outcome.ok ? outcome.response : outcome.failure);
      this.#worker.postMessage({ type: 'fetch-done', id: running.job.id, op, ok: outcome.ok, value });
    });
  }

  #onError(error: Error & { code?: string }): void {
    this.#alive = false;
    if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') {
      this.#settleError({
        code: 'memory_limit',
        message: `the function ran out of memory (heap limit ${this.memoryMb} MB); its worker was stopped`,
      });
      return;
    }
    this.#settleError({ code: 'function_error', message: `the sandbox worker crashed: ${error.message}` });
  }

  #onExit(): void {
    this.#alive = false;
    this.#settleError({ code: 'function_error', message: 'the sandbox worker exited unexpectedly' });
    for (const listener of this.#exitListeners) listener();
    this.#exitListeners.clear();
  }

  #kill(error: InvocationError): void {
    this.#settleError(error);
    this.#alive = false;
    void this.#worker.terminate();
  }

  #settleError(error: InvocationError): void {
    const logs = this.#running?.logs ?? [];
    this.#settle({ ok: false, error, logs });
  }

  #settle(outcome: SandboxOutcome): void {
    const running = this.#running;
    if (running === undefined) return;
    this.#running = undefined;
    clearTimeout(running.timer);
    for (const controller of running.fetches.values()) controller.abort();
    running.fetches.clear();
    if (running.onAbort) running.signal?.removeEventListener('abort', running.onAbort);
    running.resolve(outcome);
    // A job that went over its array-buffer budget leaves the thread holding the memory: retired.
    if (!this.#alive) void this.#worker.terminate();
  }
}
