import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createLogger, VenusError } from '@venus/protocol';
import {
  installProcessErrorHooks,
  type MetricsServer,
  serveMetrics,
  startTracing,
  VenusMetrics,
} from '@venus/protocol/node';
import { z } from 'zod';
import { createBuiltinFunctions } from './builtins/builtin-functions.ts';
import { BullmqDelegationConsumer } from './bullmq/bullmq-delegation-consumer.ts';
import { delegationQueueDepth } from './bullmq/queue-depth.ts';
import type { VenusFunction } from './function-definition.ts';
import { readHarnessSettings } from './harness-settings.ts';
import { llmPlannerFromEnv } from './llm-planner.ts';
import { CatalogDelegationRunner } from './platform/catalog-delegation-runner.ts';
import { FunctionPlatform } from './platform/function-platform.ts';
import { RedisFunctionStore } from './platform/store/redis-function-store.ts';
import { RedisTimelineReader } from './redis-timeline-reader.ts';
import { RouterPlanner } from './router-planner.ts';

/**
 * The `harness` process's settings (harness-settings.ts; older names without `VENUS_` are accepted):
 * - VENUS_REDIS_URL (required), VENUS_HARNESS_PREFIX (default `venus:`), VENUS_HARNESS_CONCURRENCY (jobs at once, 16);
 * - VENUS_HARNESS_LOCK_DURATION_MS / VENUS_HARNESS_STALLED_INTERVAL_MS / VENUS_HARNESS_MAX_STALLED_COUNT: how soon a
 *   job whose harness died runs elsewhere (BullMQ defaults 30 s / 30 s; tests use ~2 s / 1 s);
 * - VENUS_HARNESS_PROGRESS_FIRST_MS / VENUS_HARNESS_PROGRESS_EVERY_MS: "still working" notices (30 s / 60 s);
 * - VENUS_HARNESS_DRAIN_MS: how long SIGTERM lets running work finish (10 s); the rest runs elsewhere;
 * - VENUS_HARNESS_BUILTIN_LATENCY_MS: overrides the built-ins' simulated latency;
 * - tenants' deployed functions (`/v1/functions`) are read from Redis under `${VENUS_HARNESS_PREFIX}fn:`, as
 *   the embedded runtime writes them, and run beside the built-ins; VENUS_FUNCTIONS_ALLOW_PRIVATE=1
 *   lets their HTTP endpoints be on private or loopback addresses (refused by default); VENUS_SECRETS_KEY
 *   reads their secrets encrypted (the same key as the edge's); VENUS_PLANNER_BASE_URL + VENUS_PLANNER_MODEL
 *   (+ VENUS_PLANNER_API_KEY): an OpenAI-compatible model picks the function, the router as fallback;
 * - VENUS_REDIS_PREFIX (default `venus:`): where the GPU workers write session timelines (as theirs);
 *   each delegation's evidence is read from there, up to its cutoff;
 * - VENUS_HARNESS_FUNCTIONS_MODULE: a module (path from the working directory, or URL) whose default
 *   export is an array of VenusFunctions, or a function returning one: registered after the built-ins;
 * - VENUS_METRICS_PORT (default 0: a free port, named in the ready line; deployments set 9464) on VENUS_HOST (127.0.0.1): `GET /metrics` (runs by
 *   outcome, queue depth, the process's own series); VENUS_TRACING (`otlp`, `console`, `off`):
 *   its `harness.run` / `function.run` spans (docs/observability.md).
 */

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
export async function startHarness(environment: NodeJS.ProcessEnv): Promise<{
  consumer: BullmqDelegationConsumer;
  metrics: VenusMetrics;
  metricsServer: MetricsServer;
  close(): Promise<void>;
}> {
  const { settings: env, env: resolved } = readHarnessSettings(environment);
  const tracing = await startTracing({ service: 'harness', exporter: env.VENUS_TRACING });
  const metrics = new VenusMetrics({ process: 'harness' });
  const functions = createBuiltinFunctions({
    ...(env.VENUS_HARNESS_BUILTIN_LATENCY_MS === undefined ? {} : { latencyMs: env.VENUS_HARNESS_BUILTIN_LATENCY_MS }),
    // call_number / transfer_call exist only where the SIP bridge's control API is configured.
    ...(env.VENUS_SIP_CONTROL_URL !== undefined && env.VENUS_SIP_CONTROL_TOKEN !== undefined
      ? { sipControl: { url: env.VENUS_SIP_CONTROL_URL, token: env.VENUS_SIP_CONTROL_TOKEN } }
      : {}),
  });
  if (env.VENUS_HARNESS_FUNCTIONS_MODULE)
    functions.push(...(await loadExtraFunctions(env.VENUS_HARNESS_FUNCTIONS_MODULE)));
  const planner = llmPlannerFromEnv(resolved, new RouterPlanner());
  const platform = new FunctionPlatform({
    store: new RedisFunctionStore({
      url: env.VENUS_REDIS_URL,
      prefix: `${env.VENUS_HARNESS_PREFIX}fn:`,
      ...(env.VENUS_SECRETS_KEY ? { secretsKey: env.VENUS_SECRETS_KEY } : {}),
    }),
    http: { allowPrivateNetworks: env.VENUS_FUNCTIONS_ALLOW_PRIVATE === '1' },
  });
  const timeline = new RedisTimelineReader({ url: env.VENUS_REDIS_URL, prefix: env.VENUS_REDIS_PREFIX });
  const consumer = new BullmqDelegationConsumer({
    url: env.VENUS_REDIS_URL,
    prefix: env.VENUS_HARNESS_PREFIX,
    timeline,
    concurrency: env.VENUS_HARNESS_CONCURRENCY,
    runner: new CatalogDelegationRunner({
      catalog: platform,
      functions,
      defaultPolicy: 'when_idle',
      ...(planner ? { planner } : {}),
    }),
    lockDurationMs: env.VENUS_HARNESS_LOCK_DURATION_MS,
    stalledIntervalMs: env.VENUS_HARNESS_STALLED_INTERVAL_MS,
    maxStalledCount: env.VENUS_HARNESS_MAX_STALLED_COUNT,
    progressFirstMs: env.VENUS_HARNESS_PROGRESS_FIRST_MS,
    progressEveryMs: env.VENUS_HARNESS_PROGRESS_EVERY_MS,
    drainMs: env.VENUS_HARNESS_DRAIN_MS,
    onRunEnded: (outcome) => metrics.harnessRuns.inc({ outcome }),
  });
  const depth = delegationQueueDepth({ url: env.VENUS_REDIS_URL, prefix: env.VENUS_HARNESS_PREFIX });
  metrics.watchQueue(() => depth.counts());
  await consumer.waitUntilReady();
  const metricsServer = await serveMetrics(metrics, { port: env.VENUS_METRICS_PORT, hostname: env.VENUS_HOST });
  return {
    consumer,
    metrics,
    metricsServer,
    async close() {
      await consumer.close();
      await Promise.all([platform.close(), timeline.close(), depth.close(), metricsServer.close()]);
      await tracing?.shutdown();
    },
  };
}

const log = createLogger('harness');

async function main(): Promise<void> {
  installProcessErrorHooks(log);
  const harness = await startHarness(process.env);
  const { consumer } = harness;
  // One JSON line on stdout: supervisors and tests wait for it (diagnostics go to the logger, on stderr).
  process.stdout.write(
    `${JSON.stringify({ event: 'harness.ready', pid: process.pid, workerId: consumer.workerId, metrics: harness.metricsServer.url })}\n`,
  );
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`${JSON.stringify({ event: 'harness.stopping', pid: process.pid, signal })}\n`);
    harness.close().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'close failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().catch((error: unknown) => {
    if (VenusError.isInstance(error) && error.code === 'invalid_settings') {
      // The person starting it needs the one line naming the variable, not a stack.
      log.fatal({ code: error.code }, error.message);
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    log.fatal({ err: error }, 'failed to start');
    process.exit(1);
  });
}
