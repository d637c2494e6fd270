import { spawnSync } from 'node:child_process';
import { VenusError } from '@venus/protocol';
import { ClusterChild } from './cluster-child.ts';

/**
 * redis-server's arguments for the cluster: AOF on with `appendfsync always`, so a write Redis has
 * acknowledged (a timeline event a client was then told about, a BullMQ job) is on disk before the
 * reply and survives a kill of redis-server; `everysec` could lose the last second. No RDB
 * snapshots (the AOF is the record), and `noeviction`, which BullMQ requires.
 */
export function redisServerArgs(port: number, dir: string): string[] {
  return [
    '--bind',
    '127.0.0.1',
    '--port',
    String(port),
    '--dir',
    dir,
    '--appendonly',
    'yes',
    '--appendfsync',
    'always',
    '--save',
    '',
    '--maxmemory-policy',
    'noeviction',
  ];
}

/** Refuses clearly when redis-server is not on PATH, before anything else is started. */
export function requireRedisServer(): string {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (probe.error !== undefined || probe.status !== 0) {
    throw new VenusError(
      'invalid_settings',
      'npm run cluster needs redis-server on PATH (Debian/Ubuntu: apt-get install -y redis-server; macOS: brew install redis)',
    );
  }
  return probe.stdout.trim();
}

/** Starts redis-server as a named cluster child; ready once it logs that it accepts connections. */
export async function startClusterRedis(
  port: number,
  dir: string,
  write: (line: string) => void,
  track: (child: ClusterChild) => void,
): Promise<ClusterChild> {
  const { child } = await ClusterChild.start(
    {
      name: 'redis',
      command: 'redis-server',
      args: redisServerArgs(port, dir),
      env: { PATH: process.env.PATH ?? '' },
      ready: /Ready to accept connections/,
    },
    write,
    30_000,
    track,
  );
  return child;
}
