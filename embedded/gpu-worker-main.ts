import { hostname as machineName } from 'node:os';
import { FleetMember, SessionHost, serveRelay } from '@venus/gpu-worker';
import {
  BullmqDelegationProducer,
  createBuiltinFunctions,
  FunctionRegistry,
  InProcessExecutor,
} from '@venus/harness-functions';
import type { DelegationExecutor } from '@venus/protocol';
import { createLogger, inputAudioBudgetFromEnv, workerInputAudioBudget } from '@venus/protocol';
import {
  DelegationTracing,
  installProcessErrorHooks,
  settingsOrExit,
  startTracing,
  VenusMetrics,
} from '@venus/protocol/node';
import { readGpuWorkerSettings } from './gpu-worker-settings.ts';
import { modelFromEnv } from './model-from-env.ts';
import { observeHost } from './observability.ts';
import { createSessionMedia, createSessionTimeline, storageSettingsFromEnv } from './session-storage.ts';

/**
 * The `gpu-worker` process (`node --import tsx embedded/gpu-worker-main.ts`): the model port chosen by
 * VENUS_MODEL (see model-from-env.ts; the reference model by default), the session host, the relay that edges connect to,
 * and (with Redis) the fleet registration, the Redis Streams timeline and BullMQ delegation.
 * This entry is a composition root, so it may wire in the harness's executor implementations;
 * the worker's own code still meets the harness only through `@venus/protocol`.
 *
 * Settings (gpu-worker-settings.ts; the README's settings table): VENUS_RELAY_PORT (8081), VENUS_HOST,
 * VENUS_RELAY_TOKEN, VENUS_WORKER_ID (the host name), VENUS_RELAY_PUBLIC_URL (what edges dial),
 * VENUS_MAX_SESSIONS (default: what the model measured), VENUS_INFERENCE_THREADS / VENUS_TTS_THREADS,
 * VENUS_REDIS_URL (timeline in Redis Streams under VENUS_REDIS_PREFIX, delegations to BullMQ under
 * VENUS_HARNESS_PREFIX, fleet registry under VENUS_FLEET_PREFIX; without it: in-memory timeline,
 * in-process harness, no registry), VENUS_DRAIN_TIMEOUT_MS (30,000: on SIGTERM, how long the
 * handover of the live sessions to other workers may take; see shutdown below), VENUS_TRACING (delegation spans; docs/observability.md).
 * `GET /metrics` on the relay port serves the worker's Prometheus series.
 */
const log = createLogger('gpu-worker');
installProcessErrorHooks(log);
const { settings, env: resolvedEnv } = settingsOrExit(() => readGpuWorkerSettings(), log);
const redisUrl = settings.VENUS_REDIS_URL;
const started = performance.now();
const tracing = await startTracing({ service: 'gpu-worker', exporter: settings.VENUS_TRACING });
const metrics = new VenusMetrics({ process: 'gpu-worker' });
const delegationTracing = new DelegationTracing();

const model = await modelFromEnv(resolvedEnv);
// Timeline and media in Redis with VENUS_REDIS_URL, in memory otherwise; retention from VENUS_TIMELINE_RETENTION,
// VENUS_TIMELINE_MAX_EVENTS, VENUS_MEDIA_WINDOW_MS and VENUS_MEDIA_RETENTION (session-storage.ts).
const storage = { redisUrl, prefix: settings.VENUS_REDIS_PREFIX, settings: storageSettingsFromEnv(resolvedEnv) };
const store = createSessionTimeline(storage);
const media = createSessionMedia(storage);
const executor: DelegationExecutor = delegationTracing.wrap(
  redisUrl
    ? new BullmqDelegationProducer({
        url: redisUrl,
        hostId: settings.VENUS_WORKER_ID,
        ...(settings.VENUS_HARNESS_PREFIX ? { prefix: settings.VENUS_HARNESS_PREFIX } : {}),
      })
    : new InProcessExecutor({ registry: new FunctionRegistry(createBuiltinFunctions()), timeline: store }),
);
// Each session's input audio is held near real time here too (VENUS_INPUT_AUDIO_RATE/BURST_MS, with a margin).
const inputAudio = workerInputAudioBudget(inputAudioBudgetFromEnv(resolvedEnv));
const host = new SessionHost({ model, executor, store, media, inputAudio });
observeHost(host, { metrics, worker: settings.VENUS_WORKER_ID, tracing: delegationTracing });
const capabilities = await model.capabilities();
const maxSessions = settings.VENUS_MAX_SESSIONS ?? capabilities.maxSessions;
const relay = await serveRelay({
  host,
  port: settings.VENUS_RELAY_PORT,
  hostname: settings.VENUS_HOST,
  maxSessions,
  metrics,
  ...(settings.VENUS_RELAY_TOKEN ? { token: settings.VENUS_RELAY_TOKEN } : {}),
});
const publicHost =
  settings.VENUS_HOST === '0.0.0.0' || settings.VENUS_HOST === '::' ? machineName() : settings.VENUS_HOST;
const publicUrl =
  settings.VENUS_RELAY_PUBLIC_URL ?? relay.url.replace(/^ws:\/\/[^/]+/, `ws://${publicHost}:${relay.port}`);
const member = redisUrl
  ? new FleetMember({
      redisUrl,
      id: settings.VENUS_WORKER_ID,
      url: publicUrl,
      maxSessions,
      capabilities,
      sessions: () => relay.sessionCount,
      ttlMs: settings.VENUS_FLEET_TTL_MS,
      ...(settings.VENUS_FLEET_PREFIX ? { prefix: settings.VENUS_FLEET_PREFIX } : {}),
    })
  : undefined;
await member?.start();

// The startup banner is the operator's output (what edges dial, what it holds): plain text on stdout.
process.stdout.write(
  [
    `gpu-worker ${settings.VENUS_WORKER_ID} ready in ${Math.round(performance.now() - started)} ms`,
    `  relay      ${relay.url} (edges dial ${publicUrl})${settings.VENUS_RELAY_TOKEN ? ', token required' : ''}`,
    `  model      ${capabilities.model} ${capabilities.modelRevision}, up to ${maxSessions} sessions`,
    `  timeline   ${redisUrl ? 'Redis Streams' : 'in-memory'}; harness ${redisUrl ? 'BullMQ' : 'in process'}`,
    `  fleet      ${member ? 'registered in Redis' : 'not registered (no VENUS_REDIS_URL)'}`,
    '',
  ].join('\n'),
);

let stopping = false;
async function untilNoSessions(deadline: number): Promise<void> {
  while (relay.sessionCount > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

/**
 * The drain: no new sessions (relay and registry), then every live session is handed over at once
 * (a `handover` frame to its edge, which moves it to another worker, where it resumes from its
 * timeline with its delegations re-bound); the worker exits once none is left. At
 * VENUS_DRAIN_TIMEOUT_MS, whatever is left is let go of anyway (its edge fails it over).
 */
async function shutdown(): Promise<void> {
  relay.drain();
  await member?.drain();
  relay.handOverAll();
  const deadline = Date.now() + settings.VENUS_DRAIN_TIMEOUT_MS;
  await untilNoSessions(deadline);
  if (relay.sessionCount > 0) {
    log.warn({ sessions: relay.sessionCount }, 'drain deadline: letting the sessions left go');
    relay.releaseAll();
    // Their events are being stored; a store that does not answer does not hold the exit for long.
    await untilNoSessions(Date.now() + 5_000);
  }
  await relay.close();
  await member?.leave();
  await host.close();
  await executor.close();
  await model.close();
  await store.close();
  await media.close();
  await tracing?.shutdown();
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    log.info({ sessions: relay.sessionCount, drainTimeoutMs: settings.VENUS_DRAIN_TIMEOUT_MS }, 'draining');
    shutdown().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
}
