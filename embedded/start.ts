import { startEmbeddedRuntime } from './embedded-runtime.ts';

/** `npm start`: the whole runtime in one process on 127.0.0.1:8080 (PORT, HOST, REDIS_URL, VENUS_API_KEYS). */
const port = Number(process.env.PORT ?? 8080);
const hostname = process.env.HOST ?? '127.0.0.1';
const apiKeys = process.env.VENUS_API_KEYS?.split(',').filter(Boolean);
const started = performance.now();
const runtime = await startEmbeddedRuntime({
  port,
  hostname,
  ...(process.env.REDIS_URL ? { redisUrl: process.env.REDIS_URL } : {}),
  ...(apiKeys?.length ? { apiKeys } : {}),
});
const caps = await runtime.model.capabilities();
const ws = runtime.url.replace(/^http/, 'ws');
console.log(`Realtime-Venus runtime ready in ${Math.round(performance.now() - started)} ms`);
console.log(`  console    ${runtime.url}/`);
console.log(`  realtime   ${ws}/v1/realtime   (OpenAI-Realtime-compatible + venus.* events)`);
console.log(`  model      ${caps.model} ${caps.modelRevision}, up to ${caps.maxSessions} sessions`);
console.log(`  timeline   ${process.env.REDIS_URL ? 'Redis Streams' : 'in-memory'}; harness in process`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    console.log('shutting down…');
    runtime.close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  });
}
