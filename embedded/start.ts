import { closeTenancy, EdgeAuth, edgeAuthOptionsFromEnv, tenancyFromEnv, tlsFromEnv } from '@venus/edge';
import { llmPlannerFromEnv, RouterPlanner } from '@venus/harness-functions';
import { createLogger } from '@venus/protocol';
import { installProcessErrorHooks, settingsOrExit, startTracing } from '@venus/protocol/node';
import { devTlsBanner, devTlsListener } from './dev-tls.ts';
import { startEmbeddedRuntime } from './embedded-runtime.ts';
import { readStartSettings } from './start-settings.ts';

/**
 * `npm start`: the whole runtime in one process on 127.0.0.1:8080. Settings (start-settings.ts; the
 * README's settings table): VENUS_PORT, VENUS_HOST, VENUS_REDIS_URL (Redis Streams timeline), auth
 * (VENUS_API_KEYS / VENUS_ADMIN_KEY / VENUS_AUTH_SECRET), VENUS_TENANT_LIMITS, the functions platform
 * (VENUS_FUNCTIONS_ALLOW_PRIVATE, VENUS_SECRETS_KEY), the planner (VENUS_PLANNER_*), the model
 * (VENUS_MODEL and its settings), TLS (VENUS_TLS_KEY_FILE + VENUS_TLS_CERT_FILE), traces (VENUS_TRACING).
 * `GET /metrics` serves the edge's, the worker's and the harness's series (docs/observability.md).
 */
const log = createLogger('start');
installProcessErrorHooks(log);
const { settings, env } = settingsOrExit(() => readStartSettings(), log);
const tls = tlsFromEnv(env);
// Without a certificate of its own, wss is also served on VENUS_TLS_PORT with a self-signed one.
const devTls = await devTlsListener(settings, tls, log);
const started = performance.now();
const tracing = await startTracing({ service: 'venus', exporter: settings.VENUS_TRACING });
const tenancy = tenancyFromEnv(env);
// A model-backed planner when VENUS_PLANNER_BASE_URL and VENUS_PLANNER_MODEL are set; the router otherwise.
const planner = llmPlannerFromEnv(env, new RouterPlanner());
const runtime = await startEmbeddedRuntime({
  port: settings.VENUS_PORT,
  hostname: settings.VENUS_HOST,
  ...(settings.VENUS_REDIS_URL ? { redisUrl: settings.VENUS_REDIS_URL, redisPrefix: settings.VENUS_REDIS_PREFIX } : {}),
  modelEnv: env,
  storageEnv: env,
  functionsAllowPrivateNetworks: settings.VENUS_FUNCTIONS_ALLOW_PRIVATE === '1',
  ...(settings.VENUS_SECRETS_KEY ? { secretsKey: settings.VENUS_SECRETS_KEY } : {}),
  ...(planner ? { planner } : {}),
  edge: {
    auth: new EdgeAuth(edgeAuthOptionsFromEnv(env)),
    tenancy,
    ...(tls ? { tls } : {}),
    ...(devTls.secure ? { secure: devTls.secure } : {}),
  },
});
const caps = await runtime.model.capabilities();
const ws = runtime.url.replace(/^http/, 'ws');
const secured =
  settings.VENUS_ADMIN_KEY || settings.VENUS_API_KEYS
    ? 'API keys required'
    : 'open (set VENUS_API_KEYS or VENUS_ADMIN_KEY to require keys)';
// The startup banner is `npm start`'s real output for the person who ran it (where to point a
// browser or a client), so it is plain text on stdout; diagnostics go through the logger to stderr.
process.stdout.write(
  [
    `Realtime-Venus runtime ready in ${Math.round(performance.now() - started)} ms`,
    `  console    ${runtime.url}/`,
    `  realtime   ${ws}/v1/realtime   (OpenAI-Realtime-compatible + venus.* events)`,
    ...devTlsBanner(runtime.secureUrl, devTls.certificate),
    `  model      ${caps.model} ${caps.modelRevision}, up to ${caps.maxSessions} sessions`,
    `  timeline   ${settings.VENUS_REDIS_URL ? 'Redis Streams' : 'in-memory'}; harness in process`,
    `  functions  ${runtime.url}/v1/functions   (deploy your own tools; planner: ${planner ? 'model' : 'router'})`,
    `  auth       ${secured}`,
    '',
  ].join('\n'),
);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    process.stdout.write('shutting down…\n');
    runtime
      .close()
      .then(() => closeTenancy(tenancy))
      .then(() => tracing?.shutdown())
      .then(
        () => process.exit(0),
        (err: unknown) => {
          log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
  });
}
