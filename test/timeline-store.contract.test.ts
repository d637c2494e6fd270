import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { MemoryTimelineStore, RedisTimelineStore } from '../gpu-worker/src/timeline/index.ts';
import { stamp, texts, timelineStoreContract } from './contracts/timeline-store-contract.ts';
import { removeRedisKeys } from './support/redis.ts';

timelineStoreContract('memory', async (bounds) => {
  const store = new MemoryTimelineStore(bounds);
  return { store, cleanup: () => store.close() };
});

timelineStoreContract('redis', async (bounds) => {
  const url = process.env.REDIS_URL;
  if (!url) throw new Error('REDIS_URL is not set: the global setup in test/setup/redis-server.ts provides it');
  const prefix = `t:${randomUUID()}:`;
  const store = new RedisTimelineStore({ url, prefix, ...bounds });
  const peers: RedisTimelineStore[] = [];
  return {
    store,
    openPeer: () => {
      const peer = new RedisTimelineStore({ url, prefix });
      peers.push(peer);
      return peer;
    },
    cleanup: async () => {
      await Promise.all([store, ...peers].map((s) => s.close()));
      await removeRedisKeys(prefix, url);
    },
  };
});

describe('RedisTimelineStore', () => {
  it('closes the dedicated connection of a tail when its signal aborts', async () => {
    const url = process.env.REDIS_URL!;
    const prefix = `t:${randomUUID()}:`;
    const store = new RedisTimelineStore({ url, prefix });
    const admin = new Redis(url);
    const tailConnections = async () =>
      String(await admin.client('LIST'))
        .split('\n')
        .filter((line) => line.includes(` name=timeline-tail:${prefix} `)).length;
    try {
      await store.append(texts('s', 1, 1));
      const controller = new AbortController();
      let caughtUp!: () => void;
      const backlogDone = new Promise<void>((resolve) => {
        caughtUp = resolve;
      });
      const consumer = (async () => {
        for await (const _ of store.tail('s', { signal: controller.signal })) caughtUp();
      })();
      await backlogDone;
      await expect.poll(tailConnections).toBe(1);
      controller.abort();
      await consumer;
      await expect.poll(tailConnections).toBe(0);
    } finally {
      await store.delete('s');
      await store.close();
      await admin.quit();
    }
  });

  it('bounds a stream by expiry: idle TTL while live, the retention once closed, late events keep it, a reopen lifts it', async () => {
    const url = process.env.REDIS_URL!;
    const prefix = `t:${randomUUID()}:`;
    const store = new RedisTimelineStore({ url, prefix, retentionMs: 30_000, idleTtlMs: 120_000 });
    const admin = new Redis(url);
    const ttl = () => admin.pttl(`${prefix}timeline:s`);
    const system = (seq: number, type: 'session.closed' | 'session.incarnation') =>
      stamp('s', seq, [
        type === 'session.closed'
          ? { stream: 'system', type, data: { reason: 'bye' } }
          : { stream: 'system', type, data: { incarnation: 1, reason: 'reopen' } },
      ]);
    try {
      await store.append(texts('s', 1, 2));
      expect(await ttl()).toBeGreaterThan(30_000);
      expect(await ttl()).toBeLessThanOrEqual(120_000);
      await store.append(system(3, 'session.closed'));
      expect(await ttl()).toBeGreaterThan(0);
      expect(await ttl()).toBeLessThanOrEqual(30_000);
      await store.append(texts('s', 4, 1)); // a work state settling after the close
      expect(await ttl()).toBeLessThanOrEqual(30_000);
      await store.append(system(5, 'session.incarnation'));
      expect(await ttl()).toBeGreaterThan(30_000);
    } finally {
      await store.delete('s');
      await store.close();
      await admin.quit();
    }
  });
});
