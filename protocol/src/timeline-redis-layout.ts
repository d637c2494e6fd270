/**
 * How the Redis Streams timeline lays a session out, shared by the store that writes it (the GPU
 * worker's RedisTimelineStore) and the readers in other processes (the harness reads a
 * delegation's evidence): one stream per session, `${prefix}timeline:${session}`, whose entry IDs
 * are `${seq}-0` and whose field `e` holds the event JSON.
 *
 * @example
 *   await redis.xrange(REDIS_TIMELINE.key('venus:', 's1'), REDIS_TIMELINE.entryId(1), REDIS_TIMELINE.entryId(9));
 */
export const REDIS_TIMELINE = {
  key: (prefix: string, session: string): string => `${prefix}timeline:${session}`,
  entryId: (seq: number): string => `${seq}-0`,
  field: 'e',
} as const;
