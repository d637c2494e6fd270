import { hostname as machineName } from 'node:os';
import { FleetMember, SessionHost, serveRelay } from '@venus/gpu-worker';
import {
  BullmqDelegationProducer,
  createBuiltinFunctions,
  FunctionRegistry,
  InProcessExecutor,
} from '@venus/harness-functions';
import type { DelegationExecutor } from '@venus/protocol';
import { z } from 'zod';
import { modelFromEnv } from './model-from-env.ts';
import { createSessionMedia, createSessionTimeline, storageSettingsFromEnv } from './session-storage.ts';

/**
 * The `gpu-worker` process (`node --import tsx embedded/gpu-worker-main.ts`): the model port chosen by
 * VENUS_MODEL (see model-from-env.ts; the reference model by default), the session host, the relay that edges connect to,
 * and (with Redis) the fleet registration, the Redis Streams timeline and BullMQ delegation.
 * This entry is a composition root, so it may wire in the harness's executor implementations;
 * the worker's own code still meets the harness only through `@venus/protocol`.
 *
 * Environment:
 * - RELAY_PORT (8081), HOST (127.0.0.1; `0.0.0.0` in a container), VENUS_RELAY_TOKEN (edges send it);
 * - WORKER_ID (the host name), RELAY_PUBLIC_URL (what edges dial; default ws://<host>:<port>/relay);
 * - MAX_SESSIONS (default: what the model measured), INFERENCE_THREADS / TTS_THREADS (1 / 1);
 * - REDIS_URL: timeline in Redis Streams (VENUS_REDIS_PREFIX, `venus:`), delegations to BullMQ
 *   (HARNESS_PREFIX, `venus:`, shared with the harness), fleet registry (VENUS_FLEET_PREFIX, none);
 *   without it: in-memory timeline, in-process harness, no registry (point edges at VENUS_WORKERS);
 * - DRAIN_TIMEOUT_MS (30,000): on SIGTERM, how long live sessions may finish while no new ones arrive.
 */
const EnvSchema = z.object({
  RELAY_PORT: z.coerce.number().int().min(0).max(65_535).default(8081),
  HOST: z.string().default('127.0.0.1'),
  VENUS_RELAY_TOKEN: z.string().optional(),
  WORKER_ID: z.string().min(1).default(machineName()),
  RELAY_PUBLIC_URL: z
    .string()
    .regex(/^wss?:\/\//, 'a ws(s):// url')
    .optional(),
  MAX_SESSIONS: z.coerce.number().int().positive().optional(),
  INFERENCE_THREADS: z.coerce.number().int().positive().default(1),
  TTS_THREADS: z.coerce.number().int().positive().default(1),
  REDIS_URL: z.string().optional(),
  VENUS_REDIS_PREFIX: z.string().default('venus:'),
  HARNESS_PREFIX: z.string().optional(),
  VENUS_FLEET_PREFIX: z.string().optional(),
  DRAIN_TIMEOUT_MS: z.coerce.number().int().nonnegative().default(30_000),
});

const parsed = EnvSchema.safeParse(process.env);
if (!parsed.success) {
  const issue = parsed.error.issues[0];
  console.error(`gpu-worker: ${String(issue?.path[0])}: ${issue?.message}`);
  process.exit(2);
}
const env = parsed.data;
const redisUrl = env.REDIS_URL || undefined;
const started = performance.now();

const model = await modelFromEnv(process.env);
// Timeline and media in Redis with VENUS_REDIS_URL, in memory otherwise; retention from VENUS_TIMELINE_RETENTION,
// VENUS_TIMELINE_MAX_EVENTS, VENUS_MEDIA_WINDOW_MS and VENUS_MEDIA_RETENTION (session-storage.ts).
const storage = { redisUrl, prefix: env.VENUS_REDIS_PREFIX, settings: storageSettingsFromEnv(process.env) };
const store = createSessionTimeline(storage);
const media = createSessionMedia(storage);
const executor: DelegationExecutor = redisUrl
  ? new BullmqDelegationProducer({
      url: redisUrl,
      hostId: env.WORKER_ID,
      ...(env.HARNESS_PREFIX ? { prefix: env.HARNESS_PREFIX } : {}),
    })
  : new InProcessExecutor({ registry: new FunctionRegistry(createBuiltinFunctions()), timeline: store });
const host = new SessionHost({ model, executor, store, media });
const capabilities = await model.capabilities();
const maxSessions = env.MAX_SESSIONS ?? capabilities.maxSessions;
const relay = await serveRelay({
  host,
  port: env.RELAY_PORT,
  hostname: env.HOST,
  maxSessions,
  ...(env.VENUS_RELAY_TOKEN ? { token: env.VENUS_RELAY_TOKEN } : {}),
});
const publicHost = env.HOST === '0.0.0.0' || env.HOST === '::' ? machineName() : env.HOST;
const publicUrl = env.RELAY_PUBLIC_URL ?? relay.url.replace(/^ws:\/\/[^/]+/, `ws://${publicHost}:${relay.port}`);
const member = redisUrl
  ? new FleetMember({
      redisUrl,
      id: env.WORKER_ID,
      url: publicUrl,
      maxSessions,
      sessions: () => relay.sessionCount,
      ...(env.VENUS_FLEET_PREFIX ? { prefix: env.VENUS_FLEET_PREFIX } : {}),
    })
  : undefined;
await member?.start();

console.log(`gpu-worker ${env.WORKER_ID} ready in ${Math.round(performance.now() - started)} ms`);
console.log(`  relay      ${relay.url} (edges dial ${publicUrl})${env.VENUS_RELAY_TOKEN ? ', token required' : ''}`);
console.log(`  model      ${capabilities.model} ${capabilities.modelRevision}, up to ${maxSessions} sessions`);
console.log(`  timeline   ${redisUrl ? 'Redis Streams' : 'in-memory'}; harness ${redisUrl ? 'BullMQ' : 'in process'}`);
console.log(`  fleet      ${member ? 'registered in Redis' : 'not registered (no REDIS_URL)'}`);

let stopping = false;
async function shutdown(): Promise<void> {
  relay.drain();
  await member?.drain();
  const deadline = Date.now() + env.DRAIN_TIMEOUT_MS;
  while (relay.sessionCount > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
  await relay.close();
  await member?.leave();
  await host.close();
  await executor.close();
  await model.close();
  await store.close();
  await media.close();
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    console.log(`gpu-worker: draining (${relay.sessionCount} sessions, up to ${env.DRAIN_TIMEOUT_MS} ms)…`);
    shutdown().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  });
}
