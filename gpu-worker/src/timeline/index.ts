import type { TimelineStore } from '@venus/protocol';
import { MemoryTimelineStore } from './memory-timeline-store.ts';
import { RedisTimelineStore } from './redis-timeline-store.ts';

export { type BenchTimelineStoreResult, benchTimelineStore } from './bench-timeline-store.ts';
export { MemoryTimelineStore } from './memory-timeline-store.ts';
export { RedisTimelineStore, type RedisTimelineStoreOptions } from './redis-timeline-store.ts';

/**
 * Picks the timeline store for a deployment: Redis Streams when a URL is configured (production,
 * failover across workers), otherwise the in-memory store (embedded, single process).
 *
 * @example
 *   const store = createTimelineStore({ redisUrl: process.env.REDIS_URL, prefix: 'venus:' });
 */
export function createTimelineStore(options: { redisUrl?: string; prefix?: string } = {}): TimelineStore {
  if (options.redisUrl) return new RedisTimelineStore({ url: options.redisUrl, prefix: options.prefix });
  return new MemoryTimelineStore();
}
