import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';

/**
 * Starts one real redis-server for the whole test run (with AOF available for durability tests)
 * and hands its URL to the tests as REDIS_URL. Each test uses its own key prefix and cleans up.
 */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      srv.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export default async function setup(): Promise<() => Promise<void>> {
  if (process.env.REDIS_URL) return async () => {};
  const which = spawnSync('redis-server', ['--version']);
  if (which.status !== 0) {
    throw new Error('redis-server is not installed: run `apt-get install -y redis-server` (or .ci/run)');
  }
  const port = await freePort();
  const dir = path.resolve('.redis-test', String(port));
  mkdirSync(dir, { recursive: true });
  const child = spawn(
    'redis-server',
    ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--dir', dir, '--maxmemory-policy', 'noeviction'],
    { stdio: 'ignore', detached: false },
  );
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (
      spawnSync('redis-cli', ['-p', String(port), 'ping'])
        .stdout?.toString()
        .includes('PONG')
    )
      break;
    await new Promise((r) => setTimeout(r, 50));
  }
  process.env.REDIS_URL = url;
  return async () => {
    child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 100));
    rmSync(dir, { recursive: true, force: true });
  };
}
