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
