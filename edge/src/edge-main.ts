import { createLogger } from '@venus/protocol';
import { installProcessErrorHooks, settingsOrExit, VenusMetrics } from '@venus/protocol/node';
import { serveEdgeNode } from './adapters/node.ts';
import { EdgeAuth } from './auth/edge-auth.ts';
import { edgeAuthOptionsFromEnv } from './auth/edge-auth-from-env.ts';
import { readEdgeSettings } from './edge-settings.ts';
import { FleetWorkerLink, placementFromEnv } from './fleet/index.ts';
import { WebSocketWorkerLink } from './relay/index.ts';
import { closeTenancy, tenancyFromEnv } from './tenancy/tenancy-from-env.ts';
import { tlsFromEnv } from './tls/tls-options.ts';

/**
 * The `edge` process: the Node edge gateway in front of a fleet of GPU workers. Each realtime
 * session is placed on a worker (least loaded live worker from the Redis fleet registry, or from the
 * static VENUS_WORKERS list) and relayed to it over msgpack WebSocket frames.
 *
 * Settings (edge-settings.ts; the README's settings table): VENUS_PORT (8080), VENUS_HOST (127.0.0.1;
 * `0.0.0.0` in a container), auth (VENUS_API_KEYS, or VENUS_ADMIN_KEY + VENUS_AUTH_SECRET with keys in
 * Redis), VENUS_TENANT_LIMITS, VENUS_TLS_KEY_FILE + VENUS_TLS_CERT_FILE, the workers (VENUS_WORKERS, or
 * VENUS_REDIS_URL for the fleet registry under VENUS_FLEET_PREFIX) and VENUS_RELAY_TOKEN.
 * `GET /metrics` serves its Prometheus series (connections by transport, relay reconnects).
 */
const log = createLogger('edge');
installProcessErrorHooks(log);
const { settings, env } = settingsOrExit(() => readEdgeSettings(), log);
const tenancy = tenancyFromEnv(env);
const tls = tlsFromEnv(env);
const placement = placementFromEnv(env);
const token = settings.VENUS_RELAY_TOKEN;
const metrics = new VenusMetrics({ process: 'edge' });

const link = new FleetWorkerLink({
  placement,
  connect: (worker, onLinkEvent) =>
    new WebSocketWorkerLink({
      url: worker.url,
      ...(token === undefined ? {} : { token }),
      onEvent: (event) => {
        onLinkEvent(event);
        // Generation 1 is the first connection; every later one came back after a drop.
        if (event.type === 'connected' && event.generation > 1) metrics.relayReconnects.inc({ worker: worker.id });
        if (event.type === 'connected' || event.type === 'disconnected' || event.type === 'sessions_failed') {
          log.info({ worker: worker.id, event }, 'worker link event');
        }
      },
    }),
  // A lost worker's sessions resume on another worker once its relay has been down for 2 s.
  onFailover: (event) => {
    metrics.recordFailover(event.reason);
    log.info({ event }, 'session failed over');
  },
});
const server = await serveEdgeNode({
  link,
  port: settings.VENUS_PORT,
  hostname: settings.VENUS_HOST,
  auth: new EdgeAuth(edgeAuthOptionsFromEnv(env)),
  tenancy,
  metrics,
  ...(tls ? { tls } : {}),
});

const workers = settings.VENUS_WORKERS ? `static list (${settings.VENUS_WORKERS})` : 'Redis fleet registry';
// The one line on stdout: the operator's (and supervisors' and tests') signal that it serves; logs go to stderr.
process.stdout.write(`edge ready: ${server.url.replace(/^http/, 'ws')}/v1/realtime  (workers from the ${workers})\n`);

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
          log.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
  });
}
