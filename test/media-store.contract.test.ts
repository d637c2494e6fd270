import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryMediaStore, RedisMediaStore } from '../gpu-worker/src/media/index.ts';
import { mediaStoreContract, segment } from './contracts/media-store-contract.ts';
import { removeRedisKeys, testRedisUrl } from './support/redis.ts';

mediaStoreContract('memory', async (bounds) => {
  const store = new MemoryMediaStore(bounds);
  return { store, cleanup: () => store.close() };
});

mediaStoreContract('redis', async (bounds) => {
  const prefix = `m:${randomUUID()}:`;
  const store = new RedisMediaStore({ url: testRedisUrl(), prefix, ...bounds });
  return {
    store,
    cleanup: async () => {
      await store.close();
      await removeRedisKeys(prefix);
    },
  };
});

describe('RedisMediaStore', () => {
  const prefix = `m:${randomUUID()}:`;
  const opened: RedisMediaStore[] = [];
  const admin = () => new Redis(testRedisUrl());
  const open = (options: ConstructorParameters<typeof RedisMediaStore>[0] = {}) => {
    const store = new RedisMediaStore({ url: testRedisUrl(), prefix, ...options });
    opened.push(store);
    return store;
  };
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
    await removeRedisKeys(prefix);
  });

  it('lets another worker read the recent window after the writer is gone (failover)', async () => {
    const writer = open();
    const refs = [1, 2, 3].map((i) => writer.put('s1', 'user', segment(16_000, i), 16_000));
    await writer.close();
    const peer = open();
    expect((await peer.recent('s1', 'user', 60_000)).map((x) => x.ref)).toStrictEqual(refs);
    expect(await peer.read('s1', refs[1]!)).toStrictEqual(segment(16_000, 2));
  });

  it('keeps Redis bounded: evicted samples are deleted, keys carry the idle TTL, then the retention', async () => {
    const redis = admin();
    try {
      const store = open({ windowMs: 100, idleTtlMs: 120_000, retentionMs: 30_000 });
      for (let i = 0; i < 50; i++) store.put('s1', 'assistant', segment(24_000, i), 24_000);
      await store.flush();
      const key = `${prefix}media:s1:assistant`;
      expect(await redis.hlen(key)).toBe(5);
      expect(await redis.llen(`${key}:refs`)).toBe(5);
      for (const k of [key, `${key}:refs`]) {
        const ttl = await redis.pttl(k);
        expect(ttl).toBeGreaterThan(30_000);
        expect(ttl).toBeLessThanOrEqual(120_000);
      }
      store.endSession('s1');
      await store.flush();
      for (const k of [key, `${key}:refs`]) {
        const ttl = await redis.pttl(k);
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(30_000);
      }
    } finally {
      await redis.quit();
    }
  });

  it('drops new samples instead of queueing without bound when Redis is behind', async () => {
    // 2000 bytes allow three 640-byte segments in flight; the fourth and fifth of the same tick are dropped.
    const store = open({ maxPendingBytes: 2000 });
    const refs = [1, 2, 3, 4, 5].map((i) => store.put('s1', 'user', segment(16_000, i), 16_000));
    expect(store.droppedSegments).toBe(2);
    const read = await Promise.all(refs.map((ref) => store.read('s1', ref)));
    expect(read.map((pcm) => pcm !== null)).toEqual([true, true, true, false, false]);
    // Once acknowledged, the budget is free again.
    await store.flush();
    expect(await store.read('s1', store.put('s1', 'user', segment(16_000, 6), 16_000))).toStrictEqual(
      segment(16_000, 6),
    );
  });
});
