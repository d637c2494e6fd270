import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { DEFAULT_DELEGATION_PREFIX, delegationKeys } from './delegation-keys.ts';

/** BullMQ job states a depth reading counts. */
const STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'failed', 'completed'] as const;

export interface QueueDepth {
  /** Jobs in the delegation queue by state (BullMQ's `getJobCounts`: one Redis round trip). */
  counts(): Promise<Record<string, number>>;
  close(): Promise<void>;
}

/**
 * A read-only handle on the delegation queue for its depth (the `venus_queue_jobs` gauge), on its
 * own connection so a slow scrape never waits behind a worker's blocking fetch. A command fails
 * at once while Redis is away (no offline queue) rather than piling up behind scrapes.
 *
 * @example
 *   const depth = delegationQueueDepth({ url, prefix: 'venus:' });
 *   metrics.watchQueue(() => depth.counts());
 */
export function delegationQueueDepth(options: { url: string; prefix?: string }): QueueDepth {
  const keys = delegationKeys(options.prefix ?? DEFAULT_DELEGATION_PREFIX);
  const connection = new Redis(options.url, {
    connectionName: 'delegation-queue-depth',
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
  });
  // Reconnects are ioredis's business; a scrape during an outage just reads nothing.
  connection.on('error', () => {});
  const queue = new Queue(keys.queueName, { connection, prefix: keys.bullPrefix });
  queue.on('error', () => {});
  return {
    async counts() {
      const counts = await queue.getJobCounts(...STATES);
      return counts;
    },
    async close() {
      await queue.close();
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}
