import { RedisFunctionStore } from '@venus/harness-functions';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { removeRedisKeys } from './support/redis.ts';

/** Tenants' function secrets in a real Redis, encrypted with VENUS_SECRETS_KEY's key. */
const url = process.env.REDIS_URL!;
const prefix = `test:fn-secrets:${crypto.randomUUID()}:`;
const redis = new Redis(url);
const KEY = 'a-long-random-deployment-passphrase-for-secrets';

afterAll(async () => {
  await removeRedisKeys(prefix, url);
  await redis.quit();
});

async function rawSecrets(): Promise<Record<string, string>> {
  const [key] = await redis.keys(`${prefix}*secrets`);
  return key === undefined ? {} : redis.hgetall(key);
}

describe('function secrets at rest', () => {
  it('stores ciphertext, reads the plain value back, and refuses a value moved to another name', async () => {
    const store = new RedisFunctionStore({ url, prefix, secretsKey: KEY });
    try {
      expect(await store.setSecret('acme', 'API_TOKEN', 'tok_live_123', 10)).toBe(true);
      expect(await store.setSecret('acme', 'OTHER', 'second', 10)).toBe(true);
      const raw = await rawSecrets();
      expect(raw.API_TOKEN).toMatch(/^v1:/);
      expect(JSON.stringify(raw)).not.toContain('tok_live_123');
      expect(await store.getSecrets('acme', ['API_TOKEN'])).toEqual({ API_TOKEN: 'tok_live_123' });
      expect(await store.listSecrets('acme')).toEqual(['API_TOKEN', 'OTHER']);

      // Someone with write access to Redis copies one tenant's ciphertext under another name.
      const [hash] = await redis.keys(`${prefix}*secrets`);
      await redis.hset(hash!, 'OTHER', raw.API_TOKEN!);
      await expect(store.getSecrets('acme', ['OTHER'])).rejects.toThrow(/does not decrypt/);
    } finally {
      await store.close();
    }
  });

  it('does not read encrypted secrets without the key, or with another key', async () => {
    const keyless = new RedisFunctionStore({ url, prefix });
    const wrong = new RedisFunctionStore({ url, prefix, secretsKey: 'another passphrase entirely' });
    try {
      await expect(keyless.getSecrets('acme', ['API_TOKEN'])).rejects.toThrow(/set VENUS_SECRETS_KEY/);
      await expect(wrong.getSecrets('acme', ['API_TOKEN'])).rejects.toThrow(/does not decrypt/);
    } finally {
      await keyless.close();
      await wrong.close();
    }
  });

  it('still reads a secret stored in clear before encryption was turned on', async () => {
    const before = new RedisFunctionStore({ url, prefix });
    const after = new RedisFunctionStore({ url, prefix, secretsKey: KEY });
    try {
      await before.setSecret('legacy', 'OLD', 'plain-old', 10);
      expect(await after.getSecrets('legacy', ['OLD'])).toEqual({ OLD: 'plain-old' });
    } finally {
      await before.close();
      await after.close();
    }
  });
});
