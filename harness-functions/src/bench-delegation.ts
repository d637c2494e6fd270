import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { DelegationExecutor, DelegationRequest, WorkEvent } from '@venus/protocol';
import { Redis } from 'ioredis';
import { z } from 'zod';
import { BullmqDelegationConsumer } from './bullmq/bullmq-delegation-consumer.ts';
import { BullmqDelegationProducer } from './bullmq/bullmq-delegation-producer.ts';
import type { VenusFunction } from './function-definition.ts';
import { FunctionRegistry } from './function-registry.ts';
import { InProcessExecutor } from './in-process-executor.ts';

/** An executor under test, with whatever runs its work, and how to tear both down. */
export interface BenchTarget {
  executor: DelegationExecutor;
  close(): Promise<void>;
}

export interface BenchDelegationOptions {
  /** Builds a target whose harness has `benchFunctions()` registered. */
  make: () => Promise<BenchTarget>;
  /** Delegations in the throughput run. */
  n: number;
  /** Round trips measured one at a time (unloaded latency). Default min(n, 500). */
  latencySamples?: number;
  /** Cancellations measured one at a time. Default min(n, 100). */
  cancelSamples?: number;
  /** Delegations in flight at once during the throughput run. Default 256. */
  window?: number;
}

export interface BenchDelegationResult {
  /** submit -> result of a no-op function, one delegation at a time. */
  roundTripP50Ms: number;
  roundTripP99Ms: number;
  /** No-op delegations completed per second with `window` in flight. */
  perSec: number;
  /** cancel() -> CANCELLED of running work. */
  cancelP50Ms: number;
  cancelP99Ms: number;
  n: number;
}

/** No-op and hold-until-cancelled functions the bench delegates to ("noop 1", "hold 1"). */
export function benchFunctions(): VenusFunction[] {
  const tagged = (
    verb: string,
    description: string,
    run: VenusFunction<{ tag: string }>['run'],
  ): VenusFunction<{ tag: string }> => ({
    name: `bench_${verb}`,
    description,
    parameters: z.object({ tag: z.string() }),
    examples: [`${verb} 1`],
    extract: (query) => (query.startsWith(`${verb} `) ? { tag: query.slice(verb.length + 1) } : null),
    run,
  });
  return [
    tagged('noop', 'Answers at once.', async ({ tag }) => ({ data: { tag }, speech: 'Done.' })),
    tagged(
      'hold',
      'Waits until cancelled.',
      (_args, ctx) =>
        new Promise((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
        }),
    ),
  ] as VenusFunction[];
}

/** Lets a harness process load the bench functions: HARNESS_FUNCTIONS_MODULE=harness-functions/src/bench-delegation.ts. */
export default benchFunctions;

export async function inProcessBenchTarget(): Promise<BenchTarget> {
  const executor = new InProcessExecutor({ registry: new FunctionRegistry(benchFunctions()), concurrency: 256 });
  return { executor, close: () => executor.close() };
}

export interface BullmqBenchTargetOptions {
  url: string;
  /** Jobs the in-process consumer runs at once. Default 64. */
  concurrency?: number;
  /**
   * Where jobs run: `process` (default) spawns a harness process (harness-main, as deployed: the
   * session host and the harness are separate processes); `in-process` runs a consumer here;
   * `external` leaves it to harness processes started elsewhere on `prefix` with
   * HARNESS_FUNCTIONS_MODULE pointing at this module.
   */
  consumer?: 'process' | 'in-process' | 'external';
  prefix?: string;
}

const HARNESS_MAIN = fileURLToPath(new URL('./harness-main.ts', import.meta.url));
const THIS_MODULE = fileURLToPath(import.meta.url);

/** A harness process running the bench functions; resolves once it takes jobs. */
async function spawnHarness(url: string, prefix: string, concurrency: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', HARNESS_MAIN], {
    env: {
      ...process.env,
      REDIS_URL: url,
      HARNESS_PREFIX: prefix,
      HARNESS_CONCURRENCY: String(concurrency),
      HARNESS_DRAIN_MS: '0',
      HARNESS_FUNCTIONS_MODULE: THIS_MODULE,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.includes('"harness.ready"')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`bench harness exited (${code}) before it was ready`)));
  });
  return child;
}

/** Producer (and by default a consumer) on a fresh prefix; close() removes the prefix's keys. */
export async function bullmqBenchTarget(options: BullmqBenchTargetOptions): Promise<BenchTarget> {
  const prefix = options.prefix ?? `bench:${randomUUID().slice(0, 8)}:`;
  const concurrency = options.concurrency ?? 64;
  const mode = options.consumer ?? 'process';
  const consumer =
    mode === 'in-process'
      ? new BullmqDelegationConsumer({
          url: options.url,
          prefix,
          registry: new FunctionRegistry(benchFunctions()),
          concurrency,
          drainMs: 0,
        })
      : null;
  const child = mode === 'process' ? await spawnHarness(options.url, prefix, concurrency) : null;
  const executor = new BullmqDelegationProducer({ url: options.url, prefix, maxInFlightPerTenant: 1_000_000 });
  await consumer?.waitUntilReady();
  return {
    executor,
    close: async () => {
      await consumer?.close();
      if (child !== null && child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      await executor.close();
      if (mode !== 'external') await deleteKeys(options.url, prefix);
    },
  };
}

/**
 * Measures a DelegationExecutor: unloaded submit->result round trips of a no-op function, the
 * no-op throughput with a window of delegations in flight, and cancel->CANCELLED of running work.
 *
 * @example
 *   const inProcess = await benchDelegation({ make: inProcessBenchTarget, n: 5_000 });
 *   const bullmq = await benchDelegation({ make: () => bullmqBenchTarget({ url }), n: 5_000 });
 */
export async function benchDelegation(options: BenchDelegationOptions): Promise<BenchDelegationResult> {
  const target = await options.make();
  const waiters = new Map<string, (event: WorkEvent) => void>();
  const unsubscribe = target.executor.subscribe((event) => waiters.get(event.workId)?.(event));
  const run = randomUUID().slice(0, 8);
  let counter = 0;
  const request = (query: string): DelegationRequest => {
    counter++;
    return {
      workId: `bench-${run}-${counter}`,
      session: `bench-${run}-${counter}`,
      incarnation: 0,
      tenant: 'bench',
      query,
      evidenceCutoffSeq: 0,
      chunk: 0,
      createdAtMs: Date.now(),
    };
  };
  const until = (workId: string, match: (event: WorkEvent) => boolean): Promise<void> =>
    new Promise((resolve) => {
      waiters.set(workId, (event) => {
        if (!match(event)) return;
        waiters.delete(workId);
        resolve();
      });
    });
  const roundTrip = async (): Promise<number> => {
    const req = request(`noop ${counter}`);
    const done = until(req.workId, (event) => event.kind === 'result');
    const started = performance.now();
    await target.executor.submit(req);
    await done;
    return performance.now() - started;
  };

  try {
    for (let i = 0; i < 20; i++) await roundTrip(); // warm-up
    const latencies: number[] = [];
    for (let i = 0; i < (options.latencySamples ?? Math.min(options.n, 500)); i++) latencies.push(await roundTrip());

    const window = options.window ?? 256;
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: Math.min(window, options.n) }, async () => {
        while (next < options.n) {
          next++;
          await roundTrip();
        }
      }),
    );
    const perSec = options.n / ((performance.now() - started) / 1000);

    const cancels: number[] = [];
    for (let i = 0; i < (options.cancelSamples ?? Math.min(options.n, 100)); i++) {
      const req = request(`hold ${counter}`);
      const running = until(req.workId, (event) => event.kind === 'state' && event.state === 'RUNNING');
      await target.executor.submit(req);
      await running;
      const cancelled = until(req.workId, (event) => event.kind === 'state' && event.state === 'CANCELLED');
      const t0 = performance.now();
      await target.executor.cancel(req.workId, 'bench');
      await cancelled;
      cancels.push(performance.now() - t0);
    }

    return {
      roundTripP50Ms: percentile(latencies, 0.5),
      roundTripP99Ms: percentile(latencies, 0.99),
      perSec,
      cancelP50Ms: percentile(cancels, 0.5),
      cancelP99Ms: percentile(cancels, 0.99),
      n: options.n,
    };
  } finally {
    unsubscribe();
    await target.close();
  }
}

function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function deleteKeys(url: string, prefix: string): Promise<void> {
  const admin = new Redis(url);
  try {
    let cursor = '0';
    do {
      const [nextCursor, keys] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = nextCursor;
      if (keys.length > 0) await admin.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    await admin.quit();
  }
}
