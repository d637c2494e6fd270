import type { MediaStore } from '@venus/protocol';
import type { MediaBounds } from './media-retention.ts';
import { MemoryMediaStore } from './memory-media-store.ts';
import { RedisMediaStore } from './redis-media-store.ts';

export {
  DEFAULT_MEDIA_RETENTION_MS,
  DEFAULT_MEDIA_WINDOW_MS,
  type MediaBounds,
} from './media-retention.ts';
export { MemoryMediaStore } from './memory-media-store.ts';
export { RedisMediaStore, type RedisMediaStoreOptions } from './redis-media-store.ts';

/**
 * Picks the media store for a deployment, as createTimelineStore does: Redis when a URL is
 * configured (the recent audio window survives a worker), otherwise the in-memory ring.
 *
 * @example
 *   const media = createMediaStore({ redisUrl: process.env.REDIS_URL, prefix: 'venus:', windowMs: 60_000 });
 */
export function createMediaStore(options: MediaBounds & { redisUrl?: string; prefix?: string } = {}): MediaStore {
  const { redisUrl, prefix, ...bounds } = options;
  if (redisUrl) return new RedisMediaStore({ url: redisUrl, prefix, ...bounds });
  return new MemoryMediaStore(bounds);
}
