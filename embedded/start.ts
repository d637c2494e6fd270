import { closeTenancy, EdgeAuth, edgeAuthOptionsFromEnv, tenancyFromEnv, tlsFromEnv } from '@venus/edge';
import { llmPlannerFromEnv, RouterPlanner } from '@venus/harness-functions';
import { startEmbeddedRuntime } from './embedded-runtime.ts';

/**
 * `npm start`: the whole runtime in one process on 127.0.0.1:8080. Environment: PORT, HOST,
 * REDIS_URL (Redis Streams timeline), VENUS_API_KEYS / VENUS_ADMIN_KEY / VENUS_AUTH_SECRET (auth),
 * VENUS_TENANT_LIMITS (JSON), VENUS_FUNCTIONS_ALLOW_PRIVATE=1 (HTTP functions may call private addresses), VENUS_SECRETS_KEY (functions' secrets encrypted in Redis), VENUS_PLANNER_BASE_URL + VENUS_PLANNER_MODEL
 * (+ VENUS_PLANNER_API_KEY: an OpenAI-compatible model picks the function), VENUS_MODEL (reference | cascade | venus-service | onnx-bundle), VENUS_TLS_KEY_FILE + VENUS_TLS_CERT_FILE (https/wss).
 */
const port = Number(process.env.PORT ?? 8080);
const hostname = process.env.HOST ?? '127.0.0.1';
const tls = tlsFromEnv(process.env);
const started = performance.now();
const tenancy = tenancyFromEnv(process.env);
// A model-backed planner when VENUS_PLANNER_BASE_URL and VENUS_PLANNER_MODEL are set; the router otherwise.
const planner = llmPlannerFromEnv(process.env, new RouterPlanner());
const runtime = await startEmbeddedRuntime({
  port,
  hostname,
  ...(process.env.REDIS_URL ? { redisUrl: process.env.REDIS_URL } : {}),
  modelEnv: process.env,
  functionsAllowPrivateNetworks: process.env.VENUS_FUNCTIONS_ALLOW_PRIVATE === '1',
  ...(process.env.VENUS_SECRETS_KEY ? { secretsKey: process.env.VENUS_SECRETS_KEY } : {}),
  ...(planner ? { planner } : {}),
  edge: {
    auth: new EdgeAuth(edgeAuthOptionsFromEnv(process.env)),
    tenancy,
    ...(tls ? { tls } : {}),
  },
});
const caps = await runtime.model.capabilities();
const ws = runtime.url.replace(/^http/, 'ws');
const secured =
  process.env.VENUS_ADMIN_KEY || process.env.VENUS_API_KEYS
    ? 'API keys required'
    : 'open (set VENUS_API_KEYS or VENUS_ADMIN_KEY to require keys)';
console.log(`Realtime-Venus runtime ready in ${Math.round(performance.now() - started)} ms`);
console.log(`  console    ${runtime.url}/`);
console.log(`  realtime   ${ws}/v1/realtime   (OpenAI-Realtime-compatible + venus.* events)`);
console.log(`  model      ${caps.model} ${caps.modelRevision}, up to ${caps.maxSessions} sessions`);
console.log(`  timeline   ${process.env.REDIS_URL ? 'Redis Streams' : 'in-memory'}; harness in process`);
console.log(
  `  functions  ${runtime.url}/v1/functions   (deploy your own tools; planner: ${planner ? 'model' : 'router'})`,
);
console.log(`  auth       ${secured}`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    console.log('shutting down…');
    runtime
      .close()
      .then(() => closeTenancy(tenancy))
      .then(
        () => process.exit(0),
        (err: unknown) => {
          console.error(err);
          process.exit(1);
        },
      );
  });
}
