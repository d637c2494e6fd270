import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

/** The test Redis (started by test/setup/redis-server.ts for the whole run). */
export function testRedisUrl(): string {
  const url = process.env.REDIS_URL;
  if (!url) throw new Error('REDIS_URL is set by the test setup');
  return url;
}

/** Deletes every key under `prefix`, on its own connection: each test cleans up after itself. */
export async function removeRedisKeys(prefix: string, url = testRedisUrl()): Promise<void> {
  const admin = new Redis(url);
  try {
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length > 0) await admin.del(...keys);
  } finally {
    await admin.quit();
  }
}

/** A free TCP port on loopback. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/**
 * A redis-server of this test's own that writes every command to its AOF before replying, or with
 * `persistence: false` keeps nothing across a restart (no AOF, no snapshots).
 */
export async function startRedis(port: number, dir: string, { persistence = true } = {}): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    [
      '--bind',
      '127.0.0.1',
      '--port',
      String(port),
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      persistence ? 'yes' : 'no',
      '--appendfsync',
      'always',
      '--maxmemory-policy',
      'noeviction',
    ],
    { stdio: 'ignore' },
  );
  // Waits for it to answer (30 s budget on a loaded machine), not for a time.
  const deadline = Date.now() + 30_000;
  while (Date.now() <= deadline) {
    if (
      spawnSync('redis-cli', ['-p', String(port), 'ping'])
        .stdout?.toString()
        .includes('PONG')
    )
      return child;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`redis-server on port ${port} did not start`);
}
