import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FleetCluster, FleetWorker } from './fleet-cluster.ts';
import { until } from './until.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Output kept from the cluster: its banner and the children's lines, bounded against a runaway log. */
const MAX_CAPTURE = 4 * 1024 * 1024;

/** `npm run cluster` as a test fleet: its own Redis (AOF on), edges, GPU workers and harnesses. */
export interface LocalCluster extends FleetCluster {
  /** redis://… of the cluster's own Redis (timelines under `venus:`). */
  redisUrl: string;
  output(): string;
}

/**
 * Starts `embedded/cluster.ts` (what `npm run cluster` runs) on free ports and reads its banner:
 * every edge's url, the Redis url, each GPU worker's relay and pid. `env` passes VENUS_* settings
 * on to the processes that read them (VENUS_MAX_SESSIONS, VENUS_HARNESS_CONCURRENCY, …). A worker's
 * `process.exited` resolves when the cluster reports that child's exit; `stop()` stops them all.
 */
/** `embedded/cluster.ts` as a child with only `env` (plus PATH/HOME when given), its output kept (bounded). */
export function spawnCluster(env: Record<string, string>): {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
} {
  const child = spawn(process.execPath, ['--import', 'tsx', 'embedded/cluster.ts'], {
    cwd: ROOT,
    env: { HOME: process.env.HOME ?? '', VENUS_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (chunk: string): void => {
    if (out.length < MAX_CAPTURE) out += chunk;
  };
  child.stdout?.setEncoding('utf8').on('data', keep);
  child.stderr?.setEncoding('utf8').on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

export async function startLocalCluster(env: Record<string, string>): Promise<LocalCluster> {
  const { child, output, exited } = spawnCluster({
    PATH: process.env.PATH ?? '',
    VENUS_CLUSTER_PORT: '0',
    VENUS_CLUSTER_DRAIN_MS: '0',
    ...env,
  });
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  const stop = async (): Promise<void> => {
    if (!gone) child.kill('SIGTERM');
    await exited;
  };
  try {
    await until('the cluster banner', () => /Ctrl-C stops every process/.test(output()) || gone, 240_000);
    if (gone) throw new Error(`the cluster exited before it was ready:\n${output().slice(-3000)}`);
  } catch (error) {
    await stop();
    throw error;
  }
  const edgeUrls = /cluster ready: (.+)/.exec(output())![1]!.trim().split(' ');
  const redisUrl = /redis\s+(redis:\/\/\S+)/.exec(output())![1]!;
  const relays = /gpu workers (.+)/.exec(output())![1]!.trim().split(' ');
  const pids = new Map(
    [.../pids\s+(.+)/.exec(output())![1]!.matchAll(/([\w-]+)=(\d+)/g)].map((m) => [m[1]!, Number(m[2])] as const),
  );
  const workers = relays.map((url, i): FleetWorker => {
    const name = `gpu-worker-${i + 1}`;
    const pid = pids.get(name)!;
    const port = /:(\d+)\/relay$/.exec(url)![1]!;
    const exitedLine = `[cluster] ${name} exited`;
    const workerExited = until(`${name} to exit`, () => output().includes(exitedLine) || gone, 3_600_000).then(
      () => null,
    );
    return {
      id: name,
      url,
      port,
      process: {
        ready: /relay/.exec(url)!,
        pid,
        exited: workerExited,
        stderr: output,
        stop: async () => {
          process.kill(pid, 'SIGTERM');
          await workerExited;
        },
      },
    };
  });
  return { prefix: 'venus:', workers, edgeUrl: edgeUrls[0]!, edgeUrls, redisUrl, stop, output };
}
