import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { MemoryTimelineStore, RedisTimelineStore } from '../gpu-worker/src/timeline/index.ts';
import { texts, timelineStoreContract } from './contracts/timeline-store-contract.ts';
import { removeRedisKeys } from './support/redis.ts';

timelineStoreContract('memory', async () => {
  const store = new MemoryTimelineStore();
  return { store, cleanup: () => store.close() };
});

timelineStoreContract('redis', async () => {
  const url = process.env.REDIS_URL;
  if (!url) throw new Error('REDIS_URL is not set: the global setup in test/setup/redis-server.ts provides it');
  const prefix = `t:${randomUUID()}:`;
  const store = new RedisTimelineStore({ url, prefix });
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
});
