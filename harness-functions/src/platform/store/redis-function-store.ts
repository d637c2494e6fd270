import { type FunctionSpec, type InvocationLogEntry, VenusError } from '@venus/protocol';
import { Redis } from 'ioredis';
import type { FunctionStore, StoredVersion } from './function-store.ts';
import { SecretCipher } from './secret-cipher.ts';

/** KEYS: index hash, versions hash. ARGV: name, record JSON, versions to keep. Returns the new version. */
const PUT_VERSION_LUA = `
local version = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
redis.call('HSET', KEYS[2], version, ARGV[2])
local drop = version - tonumber(ARGV[3])
if drop > 0 then redis.call('HDEL', KEYS[2], drop) end
return version
`;

/** KEYS: index hash, versions hash, logs list. ARGV: name. Returns 1 when the function existed. */
const DELETE_LUA = `
local existed = redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2], KEYS[3])
return existed
`;

/** KEYS: secrets hash. ARGV: name, value, max. Returns 0 when the tenant is at its limit. */
const SET_SECRET_LUA = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
`;

interface Commands {
  venusFnPut(index: string, versions: string, name: string, json: string, keep: number): Promise<number>;
  venusFnDelete(index: string, versions: string, logs: string, name: string): Promise<number>;
  venusFnSetSecret(secrets: string, name: string, value: string, max: number): Promise<number>;
}

export interface RedisFunctionStoreOptions {
  /** Connection URL; ignored when `client` is given. */
  url?: string;
  /** A connection to share; the store defines its scripts on it and never closes it. */
  client?: Redis;
  /** Key prefix (default `venus:fn:`). */
  prefix?: string;
  /** Encrypt secrets at rest with this key (see SecretCipher); without it they are stored in clear. */
  secretsKey?: string;
}

/**
 * Function store on Redis. A tenant's keys share one hash tag (`venus:fn:{acme}:…`), so they stay on
 * one slot of a cluster and every multi-key step is a single Lua script: a deploy either stores the
 * whole version and moves "latest" or does nothing. Secrets sit in one hash per tenant, encrypted
 * with AES-256-GCM when `secretsKey` is set (VENUS_SECRETS_KEY), else in clear; either way protect the
 * Redis itself (ACLs, TLS).
 *
 * @example
 *   const store = new RedisFunctionStore({ url: process.env.REDIS_URL, prefix: 'venus:fn:' });
 *   const catalog = new FunctionPlatform({ store });
 */
export class RedisFunctionStore implements FunctionStore {
  readonly #redis: Redis & Commands;
  readonly #ownsClient: boolean;
  readonly #prefix: string;
  readonly #cipher: SecretCipher | undefined;

  constructor(options: RedisFunctionStoreOptions) {
    if (options.client === undefined && options.url === undefined) {
      throw new VenusError('invalid_arguments', 'RedisFunctionStore needs a url or a client');
    }
    const redis = options.client ?? new Redis(options.url!, { lazyConnect: false, maxRetriesPerRequest: 3 });
    this.#ownsClient = options.client === undefined;
    this.#prefix = options.prefix ?? 'venus:fn:';
    this.#cipher = options.secretsKey === undefined ? undefined : new SecretCipher(options.secretsKey);
    redis.defineCommand('venusFnPut', { numberOfKeys: 2, lua: PUT_VERSION_LUA });
    redis.defineCommand('venusFnDelete', { numberOfKeys: 3, lua: DELETE_LUA });
    redis.defineCommand('venusFnSetSecret', { numberOfKeys: 1, lua: SET_SECRET_LUA });
    this.#redis = redis as Redis & Commands;
  }

  async putVersion(tenant: string, spec: FunctionSpec, deployedAtMs: number, keepVersions: number): Promise<number> {
    const json = JSON.stringify({ deployedAtMs, spec });
    return Number(
      await this.#redis.venusFnPut(
        this.#index(tenant),
        this.#versions(tenant, spec.name),
        spec.name,
        json,
        keepVersions,
      ),
    );
  }

  async getVersion(tenant: string, name: string, version?: number): Promise<StoredVersion | null> {
    const wanted = version ?? Number(await this.#redis.hget(this.#index(tenant), name));
    if (!Number.isInteger(wanted) || wanted <= 0) return null;
    const json = await this.#redis.hget(this.#versions(tenant, name), String(wanted));
    return json === null ? null : decode(name, wanted, json);
  }

  async listVersions(tenant: string, name: string): Promise<StoredVersion[]> {
    const all = await this.#redis.hgetall(this.#versions(tenant, name));
    return Object.entries(all)
      .map(([version, json]) => decode(name, Number(version), json))
      .sort((a, b) => a.version - b.version);
  }

  async listLatest(tenant: string): Promise<StoredVersion[]> {
    const index = await this.#redis.hgetall(this.#index(tenant));
    const names = Object.keys(index).sort();
    if (names.length === 0) return [];
    const pipeline = this.#redis.pipeline();
    for (const name of names) pipeline.hget(this.#versions(tenant, name), index[name]!);
    const replies = (await pipeline.exec()) ?? [];
    const latest: StoredVersion[] = [];
    names.forEach((name, i) => {
      const json = replies[i]?.[1];
      if (typeof json === 'string') latest.push(decode(name, Number(index[name]), json));
    });
    return latest;
  }

  async deleteFunction(tenant: string, name: string): Promise<boolean> {
    const existed = await this.#redis.venusFnDelete(
      this.#index(tenant),
      this.#versions(tenant, name),
      this.#logs(tenant, name),
      name,
    );
    return Number(existed) === 1;
  }

  async appendLog(tenant: string, name: string, entry: InvocationLogEntry, keep: number): Promise<void> {
    const key = this.#logs(tenant, name);
    await this.#redis
      .multi()
      .lpush(key, JSON.stringify(entry))
      .ltrim(key, 0, keep - 1)
      .exec();
  }

  async readLogs(tenant: string, name: string, limit: number): Promise<InvocationLogEntry[]> {
    if (limit <= 0) return [];
    const entries = await this.#redis.lrange(this.#logs(tenant, name), 0, limit - 1);
    return entries.map((json) => JSON.parse(json) as InvocationLogEntry);
  }

  async setSecret(tenant: string, name: string, value: string, maxSecrets: number): Promise<boolean> {
    const stored = this.#cipher === undefined ? value : this.#cipher.seal(tenant, name, value);
    return Number(await this.#redis.venusFnSetSecret(this.#secrets(tenant), name, stored, maxSecrets)) === 1;
  }

  async getSecrets(tenant: string, names: readonly string[]): Promise<Record<string, string>> {
    if (names.length === 0) return {};
    const values = await this.#redis.hmget(this.#secrets(tenant), ...names);
    const found: Record<string, string> = {};
    names.forEach((name, i) => {
      const value = values[i];
      if (typeof value !== 'string') return;
      if (this.#cipher !== undefined) found[name] = this.#cipher.open(tenant, name, value);
      else if (SecretCipher.isSealed(value)) {
        throw new VenusError(
          'internal_error',
          `secret ${name} of tenant ${tenant} is encrypted: set VENUS_SECRETS_KEY`,
        );
      } else found[name] = value;
    });
    return found;
  }

  async listSecrets(tenant: string): Promise<string[]> {
    return (await this.#redis.hkeys(this.#secrets(tenant))).sort();
  }

  async deleteSecret(tenant: string, name: string): Promise<boolean> {
    return (await this.#redis.hdel(this.#secrets(tenant), name)) === 1;
  }

  async close(): Promise<void> {
    if (this.#ownsClient) await this.#redis.quit();
  }

  #base(tenant: string): string {
    return `${this.#prefix}{${tenant}}:`;
  }

  #index(tenant: string): string {
    return `${this.#base(tenant)}index`;
  }

  #versions(tenant: string, name: string): string {
    return `${this.#base(tenant)}fn:${name}:versions`;
  }

  #logs(tenant: string, name: string): string {
    return `${this.#base(tenant)}fn:${name}:logs`;
  }

  #secrets(tenant: string): string {
    return `${this.#base(tenant)}secrets`;
  }
}

function decode(name: string, version: number, json: string): StoredVersion {
  const { deployedAtMs, spec } = JSON.parse(json) as { deployedAtMs: number; spec: FunctionSpec };
  return { name, version, deployedAtMs, spec };
}
