import { createLogger } from '@venus/protocol';
import { Redis } from 'ioredis';

const log = createLogger('gpu-worker.redis');

/**
 * A store's own Redis connection, watched: ioredis reports every failed reconnect as an `error`
 * event (printed as "Unhandled error event" when nobody listens, dozens per outage). One warning
 * when the connection is lost and one line when it is back; the store's callers see failures
 * through their commands, which is where they are handled (the timeline writer retries).
 */
export function storeConnection(component: string, url: string | undefined): Redis {
  const redis = url === undefined ? new Redis() : new Redis(url);
  watchConnection(redis, component);
  return redis;
}

export function watchConnection(redis: Redis, component: string): void {
  let down = false;
  redis.on('error', (err: unknown) => {
    if (down) return;
    down = true;
    log.warn({ err, component }, 'redis connection lost; reconnecting');
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    log.info({ component }, 'redis connection back');
  });
}
