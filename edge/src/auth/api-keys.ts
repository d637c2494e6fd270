import { formatApiKey, keyPrefix, newKeyId, newKeySecret, parseApiKey } from './api-key-format.ts';
import type { ApiKeyRecord, KeyStore } from './key-store.ts';
import type { KeyedHash } from './keyed-hash.ts';
import type { Principal } from './principal.ts';
import { normalizeScopes, type Scope } from './scopes.ts';

/** Why a credential was refused; each is a 401 with its own message. */
export type AuthFailureReason = 'missing' | 'invalid' | 'expired' | 'revoked' | 'forged';

export type Verified = { ok: true; principal: Principal } | { ok: false; reason: AuthFailureReason; message: string };

/** A key configured in the environment rather than issued: it cannot be listed, rotated or revoked. */
export interface StaticKey {
  key: string;
  tenant: string;
  scopes: readonly Scope[];
  operator: boolean;
  /** A stable name for logs and usage (never the key itself). */
  id: string;
}

export interface IssueKeyInput {
  tenant: string;
  scopes: readonly Scope[];
  name?: string | null;
  /** Epoch milliseconds; null or absent: valid until revoked. */
  expiresAt?: number | null;
}

export interface IssuedKey {
  /** The whole key, shown once: only its hash is kept. */
  key: string;
  record: ApiKeyRecord;
}

export interface ApiKeysOptions {
  store: KeyStore;
  hash: Promise<KeyedHash>;
  staticKeys?: readonly StaticKey[];
  /** Epoch milliseconds (tests pass a fake). */
  now?: () => number;
}

/**
 * Issues, checks, rotates and revokes tenant API keys (`vk_<id>_<secret>`). The store keeps a keyed
 * hash (HMAC-SHA-256 under a secret of the deployment) rather than the key: keys are 256-bit
 * random strings, so a fast hash loses nothing to brute force, and a slow one (scrypt) would put
 * tens of milliseconds of CPU on the socket-serving event loop for every request. The pepper also
 * means a leaked store alone cannot even test guesses.
 *
 * @example
 *   const keys = new ApiKeys({ store: new InMemoryKeyStore(), hash: KeyedHash.create(secret, 'api-key-hash') });
 *   const { key } = await keys.issue({ tenant: 'acme', scopes: ['realtime'] });
 *   const verified = await keys.verify(key); // { ok: true, principal: { tenant: 'acme', ... } }
 */
export class ApiKeys {
  readonly #store: KeyStore;
  readonly #hash: Promise<KeyedHash>;
  readonly #now: () => number;
  readonly #staticKeys: readonly StaticKey[];
  readonly #staticHashes: Promise<string[]>;

  constructor(options: ApiKeysOptions) {
    this.#store = options.store;
    this.#hash = options.hash;
    this.#now = options.now ?? Date.now;
    this.#staticKeys = options.staticKeys ?? [];
    this.#staticHashes = this.#hash.then((hash) => Promise.all(this.#staticKeys.map(({ key }) => hash.hex(key))));
    // A bad secret surfaces on first use; an unobserved rejection must not crash the process first.
    this.#staticHashes.catch(() => {});
  }

  get hasStaticKeys(): boolean {
    return this.#staticKeys.length > 0;
  }

  async issue(input: IssueKeyInput): Promise<IssuedKey> {
    const id = newKeyId();
    const key = formatApiKey(id, newKeySecret());
    const record: ApiKeyRecord = {
      id,
      tenant: input.tenant,
      name: input.name ?? null,
      scopes: normalizeScopes(input.scopes),
      hash: await (await this.#hash).hex(key),
      createdAt: this.#now(),
      expiresAt: input.expiresAt ?? null,
      revokedAt: null,
      rotatedFrom: null,
      rotatedTo: null,
    };
    await this.#store.put(record);
    return { key, record };
  }

  async verify(presented: string): Promise<Verified> {
    const parsed = parseApiKey(presented);
    if (parsed === undefined) return this.#verifyStatic(presented);
    const record = await this.#store.get(parsed.id);
    const hash = await this.#hash;
    if (record === undefined || !(await hash.verifyHex(presented, record.hash))) {
      return { ok: false, reason: 'invalid', message: 'unknown API key' };
    }
    const usable = this.usability(record);
    if (!usable.ok) return usable;
    return {
      ok: true,
      principal: { tenant: record.tenant, scopes: record.scopes, keyId: record.id, kind: 'api_key', operator: false },
    };
  }

  /** Whether a key may still be used (also asked for the key behind a client token). */
  usability(record: ApiKeyRecord): { ok: true } | { ok: false; reason: AuthFailureReason; message: string } {
    if (record.revokedAt !== null) {
      return { ok: false, reason: 'revoked', message: `API key ${keyPrefix(record.id)} was revoked` };
    }
    if (record.expiresAt !== null && record.expiresAt <= this.#now()) {
      const at = new Date(record.expiresAt).toISOString();
      return { ok: false, reason: 'expired', message: `API key ${keyPrefix(record.id)} expired at ${at}` };
    }
    return { ok: true };
  }

  /** Whether the key with this id (issued or static) may still be used. */
  async isLive(keyId: string): Promise<{ ok: true } | { ok: false; reason: AuthFailureReason; message: string }> {
    if (this.#staticKeys.some((key) => key.id === keyId)) return { ok: true };
    const record = await this.#store.get(keyId);
    if (record === undefined) return { ok: false, reason: 'revoked', message: `API key ${keyId} no longer exists` };
    return this.usability(record);
  }

  get(id: string): Promise<ApiKeyRecord | undefined> {
    return this.#store.get(id);
  }

  list(tenant?: string): Promise<ApiKeyRecord[]> {
    return this.#store.list(tenant);
  }

  /** Marks a key revoked (kept for audit); undefined when there is no such key. */
  async revoke(id: string): Promise<ApiKeyRecord | undefined> {
    const record = await this.#store.get(id);
    if (record === undefined) return undefined;
    if (record.revokedAt === null) {
      record.revokedAt = this.#now();
      await this.#store.put(record);
    }
    return record;
  }

  /**
   * Issues a successor with the same tenant, name and scopes. The old key keeps working until it
   * is revoked or until `previousExpiresAt`, so callers can roll the new key out first.
   */
  async rotate(
    id: string,
    previousExpiresAt: number | null,
  ): Promise<{ issued: IssuedKey; previous: ApiKeyRecord } | undefined> {
    const previous = await this.#store.get(id);
    if (previous === undefined) return undefined;
    // A key issued with a lifetime passes the same lifetime on, counted from now.
    const lifetime = previous.expiresAt === null ? null : previous.expiresAt - previous.createdAt;
    const issued = await this.issue({
      tenant: previous.tenant,
      scopes: previous.scopes,
      name: previous.name,
      expiresAt: lifetime === null ? null : this.#now() + lifetime,
    });
    issued.record.rotatedFrom = previous.id;
    await this.#store.put(issued.record);
    previous.rotatedTo = issued.record.id;
    if (previousExpiresAt !== null && (previous.expiresAt === null || previousExpiresAt < previous.expiresAt)) {
      previous.expiresAt = previousExpiresAt;
    }
    await this.#store.put(previous);
    return { issued, previous };
  }

  async #verifyStatic(presented: string): Promise<Verified> {
    const hash = await this.#hash;
    const hashes = await this.#staticHashes;
    let match: StaticKey | undefined;
    // Every configured key is checked, so the time taken does not tell which one came close.
    for (let i = 0; i < this.#staticKeys.length; i++) {
      if ((await hash.verifyHex(presented, hashes[i]!)) && match === undefined) match = this.#staticKeys[i];
    }
    if (match === undefined) return { ok: false, reason: 'invalid', message: 'unknown API key' };
    return {
      ok: true,
      principal: {
        tenant: match.tenant,
        scopes: match.scopes,
        keyId: match.id,
        kind: 'api_key',
        operator: match.operator,
      },
    };
  }
}
