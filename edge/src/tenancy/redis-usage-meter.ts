import { Redis } from 'ioredis';
import { emptyUsage, USAGE_FIELDS, type UsageCounters, type UsageMeter, type UsageReport } from './usage-meter.ts';

export interface RedisUsageMeterOptions {
  url?: string;
  /** A connection to share; the meter never closes it. */
  client?: Redis;
  /** Key prefix; counters are the hash `${prefix}usage:${tenant}`. */
  prefix?: string;
  /** How often buffered increments are written (default 1000 ms). */
  flushMs?: number;
}

/**
 * Usage counters shared by every edge: one Redis hash per tenant. Increments are summed in memory
 * and written every `flushMs` in one pipeline, so audio appends every 20 ms cost no round trips;
 * `read` and `close` flush first.
 *
 * @example
 *   const meter = new RedisUsageMeter({ url: process.env.REDIS_URL, prefix: 'venus:' });
 */
export class RedisUsageMeter implements UsageMeter {
  readonly #redis: Redis;
  readonly #ownsClient: boolean;
  readonly #prefix: string;
  readonly #pending = new Map<string, UsageCounters>();
  readonly #timer: ReturnType<typeof setInterval>;
  #closing: Promise<void> | undefined;

  constructor(options: RedisUsageMeterOptions) {
    if (options.client === undefined && options.url === undefined) {
      throw new Error('RedisUsageMeter needs a url or a client');
    }
    this.#redis = options.client ?? new Redis(options.url!, { maxRetriesPerRequest: 3 });
    this.#ownsClient = options.client === undefined;
    this.#prefix = options.prefix ?? 'venus:';
    this.#timer = setInterval(() => {
      this.flush().catch(() => {
        // Kept in memory and retried at the next tick.
      });
    }, options.flushMs ?? 1000);
    this.#timer.unref?.();
  }

  add(tenant: string, delta: Partial<UsageCounters>): void {
    let pending = this.#pending.get(tenant);
    if (pending === undefined) {
      pending = emptyUsage();
      this.#pending.set(tenant, pending);
    }
    for (const field of USAGE_FIELDS) pending[field] += delta[field] ?? 0;
  }

  async flush(): Promise<void> {
    if (this.#pending.size === 0) return;
    const batch = [...this.#pending];
    this.#pending.clear();
    const pipeline = this.#redis.pipeline();
    for (const [tenant, counters] of batch) {
      const key = this.#key(tenant);
      pipeline.hsetnx(key, 'since', String(Date.now()));
      for (const field of USAGE_FIELDS) {
        if (counters[field] !== 0) pipeline.hincrbyfloat(key, field, counters[field]);
      }
    }
    try {
      await pipeline.exec();
    } catch (error) {
      for (const [tenant, counters] of batch) this.add(tenant, counters);
      throw error;
    }
  }

  async read(tenant: string): Promise<UsageReport> {
    await this.flush();
    const hash = await this.#redis.hgetall(this.#key(tenant));
    const report: UsageReport = {
      tenant,
      since: hash.since === undefined ? null : Number(hash.since),
      ...emptyUsage(),
    };
    for (const field of USAGE_FIELDS) report[field] = Number(hash[field] ?? 0);
    return report;
  }

  /** Writes what is pending and lets the connection go; closing again does nothing. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      clearInterval(this.#timer);
      await this.flush();
      if (this.#ownsClient) await this.#redis.quit();
    })();
    return this.#closing;
  }

  #key(tenant: string): string {
    return `${this.#prefix}usage:${tenant}`;
  }
}
