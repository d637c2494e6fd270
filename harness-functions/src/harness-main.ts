import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { createBuiltinFunctions } from './builtins/builtin-functions.ts';
import { BullmqDelegationConsumer } from './bullmq/bullmq-delegation-consumer.ts';
import { DEFAULT_DELEGATION_PREFIX } from './bullmq/delegation-keys.ts';
import type { VenusFunction } from './function-definition.ts';
import { llmPlannerFromEnv } from './llm-planner.ts';
import { CatalogDelegationRunner } from './platform/catalog-delegation-runner.ts';
import { FunctionPlatform } from './platform/function-platform.ts';
import { RedisFunctionStore } from './platform/store/redis-function-store.ts';
import { RedisTimelineReader } from './redis-timeline-reader.ts';
import { RouterPlanner } from './router-planner.ts';

const optionalMs = z.coerce.number().int().nonnegative().optional();

/**
 * The `harness` process's configuration, from the environment:
 * - REDIS_URL (required), HARNESS_PREFIX (default `venus:`), HARNESS_CONCURRENCY (jobs at once, 16);
 * - HARNESS_LOCK_DURATION_MS / HARNESS_STALLED_INTERVAL_MS / HARNESS_MAX_STALLED_COUNT: how soon a
 *   job whose harness died runs elsewhere (BullMQ defaults 30 s / 30 s; tests use ~2 s / 1 s);
 * - HARNESS_PROGRESS_FIRST_MS / HARNESS_PROGRESS_EVERY_MS: "still working" notices (30 s / 60 s);
 * - HARNESS_DRAIN_MS: how long SIGTERM lets running work finish (10 s); the rest runs elsewhere;
 * - HARNESS_BUILTIN_LATENCY_MS: overrides the built-ins' simulated latency;
 * - tenants' deployed functions (`/v1/functions`) are read from Redis under `${HARNESS_PREFIX}fn:`, as
 *   the embedded runtime writes them, and run beside the built-ins; VENUS_FUNCTIONS_ALLOW_PRIVATE=1
 *   lets their HTTP endpoints be on private or loopback addresses (refused by default); VENUS_SECRETS_KEY
 *   reads their secrets encrypted (the same key as the edge's); VENUS_PLANNER_BASE_URL + VENUS_PLANNER_MODEL
 *   (+ VENUS_PLANNER_API_KEY): an OpenAI-compatible model picks the function, the router as fallback;
 * - VENUS_REDIS_PREFIX (default `venus:`): where the GPU workers write session timelines (as theirs);
 *   each delegation's evidence is read from there, up to its cutoff;
 * - HARNESS_FUNCTIONS_MODULE: a module (path from the working directory, or URL) whose default
 *   export is an array of VenusFunctions, or a function returning one: registered after the built-ins.
 */
export const HarnessEnvSchema = z.object({
  REDIS_URL: z.string().min(1),
  HARNESS_PREFIX: z.string().default(DEFAULT_DELEGATION_PREFIX),
  HARNESS_CONCURRENCY: z.coerce.number().int().positive().default(16),
  HARNESS_LOCK_DURATION_MS: optionalMs,
  HARNESS_STALLED_INTERVAL_MS: optionalMs,
  HARNESS_MAX_STALLED_COUNT: z.coerce.number().int().nonnegative().optional(),
  HARNESS_PROGRESS_FIRST_MS: optionalMs,
  HARNESS_PROGRESS_EVERY_MS: optionalMs,
  HARNESS_DRAIN_MS: optionalMs,
  HARNESS_BUILTIN_LATENCY_MS: optionalMs,
  HARNESS_FUNCTIONS_MODULE: z.string().min(1).optional(),
  VENUS_REDIS_PREFIX: z.string().default('venus:'),
  VENUS_FUNCTIONS_ALLOW_PRIVATE: z.enum(['0', '1']).default('0'),
  VENUS_SECRETS_KEY: z.string().min(1).optional(),
});
export type HarnessEnv = z.infer<typeof HarnessEnvSchema>;

const FunctionsExportSchema = z.union([z.array(z.custom<VenusFunction>(isFunctionLike)), z.function()]);

function isFunctionLike(value: unknown): boolean {
  return typeof value === 'object' && value !== null && 'name' in value && 'run' in value && 'extract' in value;
}

async function loadExtraFunctions(specifier: string): Promise<VenusFunction[]> {
  const url = /^[a-z]+:/i.test(specifier) ? specifier : pathToFileURL(path.resolve(specifier)).href;
  const module = (await import(url)) as { default?: unknown };
  const exported = FunctionsExportSchema.parse(module.default);
  const functions = typeof exported === 'function' ? await (exported as () => unknown)() : exported;
  return z.array(z.custom<VenusFunction>(isFunctionLike)).parse(functions);
}

/**
 * Starts a harness consumer from the environment and returns it once it takes jobs.
 *
 * @example
 *   // REDIS_URL=redis://127.0.0.1:6379 node --import tsx harness-functions/src/harness-main.ts
 *   const harness = await startHarness(process.env);
 *   // on SIGTERM: await harness.close();
 */
export async function startHarness(
  environment: NodeJS.ProcessEnv,
): Promise<{ consumer: BullmqDelegationConsumer; close(): Promise<void> }> {
  const env = HarnessEnvSchema.parse(environment);
  const functions = createBuiltinFunctions(
    env.HARNESS_BUILTIN_LATENCY_MS === undefined ? {} : { latencyMs: env.HARNESS_BUILTIN_LATENCY_MS },
  );
  if (env.HARNESS_FUNCTIONS_MODULE) functions.push(...(await loadExtraFunctions(env.HARNESS_FUNCTIONS_MODULE)));
  const planner = llmPlannerFromEnv(environment, new RouterPlanner());
  const platform = new FunctionPlatform({
    store: new RedisFunctionStore({
      url: env.REDIS_URL,
      prefix: `${env.HARNESS_PREFIX}fn:`,
      ...(env.VENUS_SECRETS_KEY ? { secretsKey: env.VENUS_SECRETS_KEY } : {}),
    }),
    http: { allowPrivateNetworks: env.VENUS_FUNCTIONS_ALLOW_PRIVATE === '1' },
  });
  const timeline = new RedisTimelineReader({ url: env.REDIS_URL, prefix: env.VENUS_REDIS_PREFIX });
  const consumer = new BullmqDelegationConsumer({
    url: env.REDIS_URL,
    prefix: env.HARNESS_PREFIX,
    timeline,
    concurrency: env.HARNESS_CONCURRENCY,
    runner: new CatalogDelegationRunner({
      catalog: platform,
      functions,
      defaultPolicy: 'when_idle',
      ...(planner ? { planner } : {}),
    }),
    lockDurationMs: env.HARNESS_LOCK_DURATION_MS,
    stalledIntervalMs: env.HARNESS_STALLED_INTERVAL_MS,
    maxStalledCount: env.HARNESS_MAX_STALLED_COUNT,
    progressFirstMs: env.HARNESS_PROGRESS_FIRST_MS,
    progressEveryMs: env.HARNESS_PROGRESS_EVERY_MS,
    drainMs: env.HARNESS_DRAIN_MS,
  });
  await consumer.waitUntilReady();
  return {
    consumer,
    async close() {
      await consumer.close();
      await Promise.all([platform.close(), timeline.close()]);
    },
  };
}

async function main(): Promise<void> {
  const harness = await startHarness(process.env);
  const { consumer } = harness;
  // One JSON line on stdout: supervisors and tests wait for it.
  console.log(JSON.stringify({ event: 'harness.ready', pid: process.pid, workerId: consumer.workerId }));
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    console.log(JSON.stringify({ event: 'harness.stopping', pid: process.pid, signal }));
    harness.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error('harness: close failed:', error);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().catch((error: unknown) => {
    console.error('harness: failed to start:', error);
    process.exit(1);
  });
}
