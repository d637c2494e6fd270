import { cpus, totalmem } from 'node:os';
import { benchTimelineStore, createTimelineStore, ReferenceModelPort } from '@venus/gpu-worker';
import startRedisForRun from '../test/setup/redis-server.ts';
import { runForegroundLoad } from './foreground-load.ts';
import { table } from './report.ts';

/**
 * `npm run bench`: prints the runtime's speed and memory figures (medians, p99, ratios). Sections:
 * foreground (sessions vs step latency, deadline misses and memory; 50 sessions with 8 slow
 * delegations in flight each), timeline stores. Pick sections with `--only a,b`; `--quick` shortens
 * every run. Figures, never pass/fail: this machine is shared and noisy.
 */
const args = process.argv.slice(2);
const only = args
  .find((a) => a.startsWith('--only='))
  ?.slice(7)
  .split(',');
const quick = args.includes('--quick');
const want = (name: string) => !only || only.includes(name);
const out: string[] = [];
const print = (s: string) => {
  out.push(s);
  console.log(s);
};

// Redis-backed sections use REDIS_URL, or a throwaway local redis-server when one is installed.
const stopRedis = await startRedisForRun().catch(() => async () => {});

print(`# Realtime-Venus runtime benchmarks`);
print(
  `machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`,
);

if (want('foreground')) {
  const port = await ReferenceModelPort.create();
  print(
    `reference model: calibrated step ${port.calibration.stepCostMs.toFixed(2)} ms/session-step, advertises ${port.calibration.maxSessions} sessions`,
  );
  const measureS = quick ? 6 : 15;
  const rows = [];
  for (const sessions of quick ? [1, 25] : [1, 10, 25, 50, 75]) {
    process.stderr.write(`foreground: ${sessions} sessions…\n`);
    const r = await runForegroundLoad({ port, sessions, chunkMs: 160, warmupS: 3, measureS });
    rows.push({
      sessions: r.sessions,
      'step p50 ms': r.stepP50Ms,
      'step p99 ms': r.stepP99Ms,
      'missed deadlines': r.missed,
      'miss rate': r.missRate,
      'RSS/session MB': r.rssPerSessionMb,
    });
  }
  print(table('Foreground loop at 160 ms chunks (reference model, mic audio streaming, no delegations)', rows));
  process.stderr.write('foreground: 50 sessions with delegations in flight…\n');
  const d = await runForegroundLoad({
    port,
    sessions: quick ? 10 : 50,
    chunkMs: 160,
    warmupS: quick ? 4 : 12,
    measureS: quick ? 8 : 20,
    delegations: { inFlightPerSession: 8, minMs: 2000, maxMs: 10_000 },
  });
  print(
    table('Foreground with slow delegations in flight (functions take 2–10 s; target: zero missed deadlines)', [
      {
        sessions: d.sessions,
        'mean in flight/session': d.meanInFlightPerSession,
        'delegations started': d.delegationsSubmitted,
        'step p50 ms': d.stepP50Ms,
        'step p99 ms': d.stepP99Ms,
        'missed deadlines': d.missed,
        'miss rate': d.missRate,
      },
    ]),
  );
  await port.close();
}

if (want('timeline')) {
  const rows = [];
  const memory = createTimelineStore();
  const m = await benchTimelineStore(memory, { events: quick ? 2000 : 10_000 });
  rows.push({
    store: 'memory',
    'append p50 ms': m.appendP50Ms,
    'append p99 ms': m.appendP99Ms,
    'events/s': m.eventsPerSec,
  });
  await memory.close();
  if (process.env.REDIS_URL) {
    const redis = createTimelineStore({ redisUrl: process.env.REDIS_URL, prefix: `bench:${Date.now()}:` });
    const r = await benchTimelineStore(redis, { events: quick ? 2000 : 10_000 });
    rows.push({
      store: 'redis streams',
      'append p50 ms': r.appendP50Ms,
      'append p99 ms': r.appendP99Ms,
      'events/s': r.eventsPerSec,
    });
    await redis.close();
  }
  print(table('Timeline store appends (one awaited append at a time)', rows));
  if (!process.env.REDIS_URL) print('(set REDIS_URL to include Redis Streams)');
}

await stopRedis();
