import type { Scope } from './scopes.ts';

/**
 * One API key as stored: everything but the secret, of which only a keyed hash is kept. Revoked
 * keys stay (with `revokedAt`) so listings and audits can still name them.
 */
export interface ApiKeyRecord {
  id: string;
  tenant: string;
  name: string | null;
  scopes: Scope[];
  /** Hex HMAC-SHA-256 of the whole key under the deployment's derived hashing key. */
  hash: string;
  /** Epoch milliseconds. */
  createdAt: number;
  expiresAt: number | null;
  revokedAt: number | null;
  /** Rotation lineage: the key this one replaced, and the key that replaced this one. */
  rotatedFrom: string | null;
  rotatedTo: string | null;
}

/**
 * Where API key records live: in memory for the embedded default and tests, Redis for a fleet of
 * edges. Plain storage; minting, hashing and checking are ApiKeys' job.
 */
export interface KeyStore {
  /** Inserts or replaces the record with this id. */
  put(record: ApiKeyRecord): Promise<void>;
  get(id: string): Promise<ApiKeyRecord | undefined>;
  /** The records of one tenant, or of every tenant, oldest first. */
  list(tenant?: string): Promise<ApiKeyRecord[]>;
  close(): Promise<void>;
}
