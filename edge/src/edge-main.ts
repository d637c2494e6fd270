import { z } from 'zod';
import { serveEdgeNode } from './adapters/node.ts';
import { EdgeAuth } from './auth/edge-auth.ts';
import { edgeAuthOptionsFromEnv } from './auth/edge-auth-from-env.ts';
import { FleetWorkerLink, placementFromEnv } from './fleet/index.ts';
import { WebSocketWorkerLink } from './relay/index.ts';
import { closeTenancy, tenancyFromEnv } from './tenancy/tenancy-from-env.ts';
import { tlsFromEnv } from './tls/tls-options.ts';

/**
 * The `edge` process: the Node edge gateway in front of a fleet of GPU workers. Each realtime
 * session is placed on a worker (least loaded live worker from the Redis fleet registry, or from the
 * static VENUS_WORKERS list) and relayed to it over msgpack WebSocket frames.
 *
 * Environment:
 * - PORT (8080), HOST (127.0.0.1; `0.0.0.0` in a container);
 * - auth as for `npm start`: VENUS_API_KEYS (comma-separated), or VENUS_ADMIN_KEY + VENUS_AUTH_SECRET
 *   (tenant keys, in Redis when REDIS_URL is set, so every edge sees the same keys);
 * - VENUS_TENANT_LIMITS (JSON; fleet-wide in Redis when REDIS_URL is set, but for input audio), usage
 *   metered in Redis when REDIS_URL is set;
 * - VENUS_TLS_KEY_FILE + VENUS_TLS_CERT_FILE: serve https/wss;
 * - VENUS_WORKERS=ws://gpu-1:8081/relay,... (static list, no Redis needed), or REDIS_URL for the
 *   fleet registry the workers heartbeat into (VENUS_FLEET_PREFIX, none by default);
 * - VENUS_RELAY_TOKEN: the token the workers' relays require.
 */
const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65_535).default(8080),
  HOST: z.string().default('127.0.0.1'),
  VENUS_RELAY_TOKEN: z.string().optional(),
});

const parsed = EnvSchema.safeParse(process.env);
if (!parsed.success) {
  const issue = parsed.error.issues[0];
  console.error(`edge: ${String(issue?.path[0])}: ${issue?.message}`);
  process.exit(2);
}
const env = parsed.data;
const tenancy = tenancyFromEnv(process.env);
const tls = tlsFromEnv(process.env);
const placement = placementFromEnv(process.env);
const token = env.VENUS_RELAY_TOKEN || undefined;

const link = new FleetWorkerLink({
  placement,
  connect: (worker) =>
    new WebSocketWorkerLink({
      url: worker.url,
      ...(token === undefined ? {} : { token }),
      onEvent: (event) => {
        if (event.type === 'connected' || event.type === 'disconnected' || event.type === 'sessions_failed') {
          console.log(`edge: worker ${worker.id}: ${JSON.stringify(event)}`);
        }
      },
    }),
});
const server = await serveEdgeNode({
  link,
  port: env.PORT,
  hostname: env.HOST,
  auth: new EdgeAuth(edgeAuthOptionsFromEnv(process.env)),
  tenancy,
  ...(tls ? { tls } : {}),
});

const workers = process.env.VENUS_WORKERS?.trim()
  ? `static list (${process.env.VENUS_WORKERS})`
  : 'Redis fleet registry';
console.log(`edge ready: ${server.url.replace(/^http/, 'ws')}/v1/realtime  (workers from the ${workers})`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    server
      .close()
      .then(() => link.close())
      .then(() => closeTenancy(tenancy))
      .then(
        () => process.exit(0),
        (error: unknown) => {
          console.error(error);
          process.exit(1);
        },
      );
  });
}
