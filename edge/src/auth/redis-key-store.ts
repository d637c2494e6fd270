import { Redis } from 'ioredis';
import { z } from 'zod';
import type { ApiKeyRecord, KeyStore } from './key-store.ts';
import { ScopeSchema } from './scopes.ts';

const RecordSchema = z.object({
  id: z.string(),
  tenant: z.string(),
  name: z.string().nullable(),
  scopes: z.array(ScopeSchema),
  hash: z.string(),
  createdAt: z.number(),
  expiresAt: z.number().nullable(),
  revokedAt: z.number().nullable(),
  rotatedFrom: z.string().nullable(),
  rotatedTo: z.string().nullable(),
});

export interface RedisKeyStoreOptions {
  /** Connection URL; ignored when `client` is given. */
  url?: string;
  /** A connection to share; the store never closes it. */
  client?: Redis;
  /** Key prefix, e.g. `venus:`; records are `${prefix}apikey:${id}`. */
  prefix?: string;
}

/**
 * KeyStore on Redis, shared by every edge of a deployment: one JSON string per key and a sorted
 * set (by creation time) of ids per tenant and overall, written together in one MULTI. Only keyed
 * hashes are stored, so a dump of this database does not yield usable keys.
 *
 * @example
 *   const store = new RedisKeyStore({ url: process.env.REDIS_URL, prefix: 'venus:' });
 *   const keys = new ApiKeys({ store, secret: process.env.VENUS_AUTH_SECRET! });
 */
export class RedisKeyStore implements KeyStore {
  readonly #redis: Redis;
  readonly #ownsClient: boolean;
  readonly #prefix: string;

  constructor(options: RedisKeyStoreOptions) {
    if (options.client === undefined && options.url === undefined) {
      throw new Error('RedisKeyStore needs a url or a client');
    }
    this.#redis = options.client ?? new Redis(options.url!, { lazyConnect: false, maxRetriesPerRequest: 3 });
    this.#ownsClient = options.client === undefined;
    this.#prefix = options.prefix ?? 'venus:';
  }

  async put(record: ApiKeyRecord): Promise<void> {
    await this.#redis
      .multi()
      .set(this.#recordKey(record.id), JSON.stringify(record))
      .zadd(this.#indexKey(record.tenant), record.createdAt, record.id)
      .zadd(this.#indexKey(), record.createdAt, record.id)
      .exec();
  }

  async get(id: string): Promise<ApiKeyRecord | undefined> {
    const text = await this.#redis.get(this.#recordKey(id));
    return text === null ? undefined : parseRecord(text);
  }

  async list(tenant?: string): Promise<ApiKeyRecord[]> {
    const ids = await this.#redis.zrange(this.#indexKey(tenant), '0', '-1');
    if (ids.length === 0) return [];
    const texts = await this.#redis.mget(ids.map((id) => this.#recordKey(id)));
    return texts.flatMap((text) => (text === null ? [] : [parseRecord(text)]));
  }

  async close(): Promise<void> {
    if (this.#ownsClient) await this.#redis.quit();
  }

  #recordKey(id: string): string {
    return `${this.#prefix}apikey:${id}`;
  }

  #indexKey(tenant?: string): string {
    return tenant === undefined ? `${this.#prefix}apikeys` : `${this.#prefix}apikeys:tenant:${tenant}`;
  }
}

function parseRecord(text: string): ApiKeyRecord {
  return RecordSchema.parse(JSON.parse(text));
}
