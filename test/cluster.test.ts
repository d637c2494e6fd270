import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { RealtimeClient } from '../embedded/demo/realtime-client.ts';
import { spawnCluster } from './support/local-cluster.ts';
import { until } from './support/until.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * `npm run cluster`'s entry as a real process: Redis, two edges, three GPU workers and two harness
 * processes, each its own child. A typed turn is answered through each edge; SIGTERM stops every child.
 */
describe('npm run cluster', () => {
  let cluster: ReturnType<typeof spawnCluster> | undefined;

  afterAll(() => {
    if (cluster && cluster.child.exitCode === null) cluster.child.kill('SIGKILL');
  });

  it('starts the fleet, answers on every edge and leaves no process behind on SIGTERM', async () => {
    cluster = spawnCluster({ PATH: process.env.PATH ?? '', VENUS_CLUSTER_PORT: '0' });
    const started = cluster;
    let exitedEarly: number | null | undefined;
    void started.exited.then((code) => {
      exitedEarly = code;
    });
    await until(
      'the cluster banner',
      () => /Ctrl-C stops every process/.test(started.output()) || exitedEarly !== undefined,
      240_000,
    );
    expect(exitedEarly, started.output().slice(-3000)).toBeUndefined();
    const banner = started.output();
    const edges = /cluster ready: (.+)/.exec(banner)![1]!.trim().split(' ');
    expect(edges).toHaveLength(2);
    const pids = [.../pids\s+(.+)/.exec(banner)![1]!.matchAll(/([\w-]+)=(\d+)/g)].map((m) => ({
      name: m[1]!,
      pid: Number(m[2]),
    }));
    expect(pids.map((p) => p.name).sort()).toEqual(
      ['edge-1', 'edge-2', 'gpu-worker-1', 'gpu-worker-2', 'gpu-worker-3', 'harness-1', 'harness-2', 'redis'].sort(),
    );
    expect(pids.every((p) => alive(p.pid))).toBe(true);
    const aofDir = /AOF in (\S+)\)/.exec(banner)![1]!;
    expect(existsSync(aofDir)).toBe(true);
    // Each child's lines come out with its name in front.
    for (const name of ['redis', 'gpu-worker-1', 'edge-2']) expect(banner).toContain(`[${name}] `);

    for (const url of edges) {
      const client = await RealtimeClient.connect({ url });
      try {
        client.say('What time is it in Tokyo?');
        await client.waitForTimeline((e) => e.type === 'assistant.delegate', 60_000);
        await client.waitForTimeline((e) => e.type === 'work.state' && e.data.state === 'COMPLETED', 60_000);
      } finally {
        await client.close();
      }
    }

    started.child.kill('SIGTERM');
    expect(await started.exited).toBe(0);
    expect(pids.filter((p) => alive(p.pid))).toEqual([]);
    expect(existsSync(aofDir)).toBe(false);
  }, 420_000);

  it('refuses to start, saying so, without redis-server on PATH', async () => {
    const run = spawnCluster({ PATH: path.join(ROOT, 'no-such-dir') });
    expect(await run.exited).toBe(2);
    expect(run.output()).toMatch(/needs redis-server on PATH/);
  }, 60_000);
});
