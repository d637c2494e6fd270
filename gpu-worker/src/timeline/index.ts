import type { TimelineStore } from '@venus/protocol';
import { MemoryTimelineStore } from './memory-timeline-store.ts';
import { RedisTimelineStore } from './redis-timeline-store.ts';
import type { TimelineBounds } from './timeline-bounds.ts';

export { type BenchTimelineStoreResult, benchTimelineStore } from './bench-timeline-store.ts';
export { MemoryTimelineStore } from './memory-timeline-store.ts';
export { storeConnection, watchConnection } from './redis-connection.ts';
export { RedisTimelineStore, type RedisTimelineStoreOptions } from './redis-timeline-store.ts';
export { DEFAULT_TIMELINE_RETENTION_MS, parseDurationMs } from './retention.ts';
export { DEFAULT_TIMELINE_MAX_EVENTS, type TimelineBounds } from './timeline-bounds.ts';

/**
 * Picks the timeline store for a deployment: Redis Streams when a URL is configured (production,
 * failover across workers), otherwise the in-memory store (embedded, single process).
 *
 * @example
 *   const store = createTimelineStore({ redisUrl: process.env.REDIS_URL, prefix: 'venus:', retentionMs: 15 * 60_000 });
 */
export function createTimelineStore(
  options: TimelineBounds & { redisUrl?: string; prefix?: string } = {},
): TimelineStore {
  const { redisUrl, prefix, ...bounds } = options;
  if (redisUrl) return new RedisTimelineStore({ url: redisUrl, prefix, ...bounds });
  return new MemoryTimelineStore(bounds);
}
