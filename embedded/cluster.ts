import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { VenusError } from '@venus/protocol';
import { ClusterChild } from './cluster-child.ts';
import { inheritedEnv } from './cluster-env.ts';
import { freeLoopbackPort } from './cluster-port.ts';
import { requireRedisServer, startClusterRedis } from './cluster-redis.ts';
import { clusterLayout, readClusterSettings } from './cluster-settings.ts';

/**
 * `npm run cluster`: the runtime's fleet on this machine, every part a real process of its own:
 * Redis (AOF on, `appendfsync always`, in a temp dir), GPU workers registered in Redis, harness
 * processes on BullMQ, and edges placing sessions from the fleet registry. Each child's log lines
 * come out here with its name in front. Ctrl-C (SIGINT) or SIGTERM stops them all, edges first and
 * Redis last, and waits for every one to exit. Settings: cluster-settings.ts.
 *
 * A child that dies while the cluster runs is reported and left down (kill -9 a GPU worker to see
 * its sessions fail over); the others keep serving.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const READY_TIMEOUT_MS = 120_000;
/** How long a stopping child may take past its own drain before it is killed. */
const KILL_AFTER_MS = 20_000;

const write = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

const children: ClusterChild[] = [];
let stopping = false;
let dataDir: string | undefined;
let removeDataDir = false;

function track(child: ClusterChild): void {
  children.push(child);
  void child.exited.then((code) => {
    if (!stopping) write(`[cluster] ${child.name} exited (${code}); the others keep running`);
  });
}

function node(entry: string, name: string, env: Record<string, string>, ready: RegExp) {
  if (stopping) return Promise.reject(new Error('the cluster is stopping'));
  return ClusterChild.start(
    { name, command: process.execPath, args: ['--import', 'tsx', entry], env, ready, cwd: ROOT },
    write,
    READY_TIMEOUT_MS,
    track,
  );
}

/** Stops edges, then GPU workers, then harnesses, then Redis: each tier waits for the one before. */
async function stopAll(): Promise<void> {
  const tiers = [/^edge-/, /^gpu-worker-/, /^harness-/, /^redis$/];
  for (const tier of tiers) {
    await Promise.all(children.filter((c) => tier.test(c.name)).map((c) => c.stop(KILL_AFTER_MS)));
  }
  // Any spawned while the tiers stopped (a start still under way) goes too.
  await Promise.all(children.map((c) => c.stop(KILL_AFTER_MS)));
  if (removeDataDir && dataDir) rmSync(dataDir, { recursive: true, force: true });
}

function shutdown(signal: string, code: number): void {
  if (stopping) return;
  write(`[cluster] ${signal}: stopping ${children.length} processes`);
  stopping = true;
  void stopAll().then(
    () => {
      write('[cluster] stopped');
      process.exit(code);
    },
    (error: unknown) => {
      write(`[cluster] stop failed: ${String(error)}`);
      process.exit(1);
    },
  );
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => shutdown(signal, 0));

try {
  const settings = readClusterSettings(process.env);
  requireRedisServer();
  const layout = clusterLayout(settings, settings.VENUS_CLUSTER_PORT === 0 ? await freeLoopbackPort() : 0);
  dataDir = settings.VENUS_CLUSTER_DATA_DIR ?? mkdtempSync(path.join(tmpdir(), 'venus-cluster-'));
  removeDataDir = settings.VENUS_CLUSTER_DATA_DIR === undefined;
  await startClusterRedis(layout.redisPort, dataDir, write, track);
  const redisUrl = `redis://127.0.0.1:${layout.redisPort}`;
  const base = { ...inheritedEnv(process.env), VENUS_HOST: '127.0.0.1', VENUS_REDIS_URL: redisUrl };

  const workers = layout.workerPorts.map((port, i) =>
    node(
      'embedded/gpu-worker-main.ts',
      `gpu-worker-${i + 1}`,
      {
        ...base,
        VENUS_WORKER_ID: `gpu-worker-${i + 1}`,
        VENUS_RELAY_PORT: String(port),
        VENUS_DRAIN_TIMEOUT_MS: String(settings.VENUS_CLUSTER_DRAIN_MS),
      },
      /relay\s+(ws:\/\/\S+\/relay)/,
    ),
  );
  const harnesses = layout.harnessMetricsPorts.map((port, i) =>
    node(
      'harness-functions/src/harness-main.ts',
      `harness-${i + 1}`,
      { ...base, VENUS_METRICS_PORT: String(port) },
      /"event":"harness\.ready"/,
    ),
  );
  const relays = (await Promise.all(workers)).map((w) => w.ready[1]!);
  await Promise.all(harnesses);
  // Edges last: by now every worker is in the registry, so the first session has somewhere to go.
  const edges = await Promise.all(
    layout.edgePorts.map((port, i) =>
      node('edge/src/edge-main.ts', `edge-${i + 1}`, { ...base, VENUS_PORT: String(port) }, /edge ready: (ws:\/\/\S+)/),
    ),
  );
  const urls = edges.map((e) => e.ready[1]!);
  const pids = children.map((c) => `${c.name}=${c.pid}`).join(' ');
  write(
    [
      '',
      `cluster ready: ${urls.join(' ')}`,
      `  redis       ${redisUrl} (AOF in ${dataDir})`,
      `  gpu workers ${relays.join(' ')}`,
      `  pids        ${pids}`,
      `  demo        VENUS_URL=${urls[0]!.replace(/^ws/, 'http').replace(/\/v1\/realtime$/, '')} npm run demo`,
      `  eval        npm run eval -- --url ${urls[0]}`,
      '  Ctrl-C stops every process',
      '',
    ].join('\n'),
  );
} catch (error) {
  const message = VenusError.isInstance(error) ? error.message : String(error);
  write(`[cluster] could not start: ${message}`);
  shutdown('start failed', VenusError.isInstance(error) && error.code === 'invalid_settings' ? 2 : 1);
}
