import type { FunctionSpec, InvocationLogEntry } from '@venus/protocol';

export interface StoredVersion {
  name: string;
  version: number;
  deployedAtMs: number;
  spec: FunctionSpec;
}

/**
 * Where the platform keeps deployed versions, invocation logs and tenant secrets. Every method is
 * scoped by tenant, so isolation between tenants is a property of the key space, not of checks.
 * Implementations: MemoryFunctionStore and RedisFunctionStore; one conformance suite covers both.
 */
export interface FunctionStore {
  /** Adds the next version atomically, dropping versions older than the newest `keepVersions`. */
  putVersion(tenant: string, spec: FunctionSpec, deployedAtMs: number, keepVersions: number): Promise<number>;
  /** The given version, or the latest. */
  getVersion(tenant: string, name: string, version?: number): Promise<StoredVersion | null>;
  /** Oldest first. */
  listVersions(tenant: string, name: string): Promise<StoredVersion[]>;
  /** The latest version of every function, by name. */
  listLatest(tenant: string): Promise<StoredVersion[]>;
  deleteFunction(tenant: string, name: string): Promise<boolean>;
  appendLog(tenant: string, name: string, entry: InvocationLogEntry, keep: number): Promise<void>;
  /** Newest first. */
  readLogs(tenant: string, name: string, limit: number): Promise<InvocationLogEntry[]>;
  /** False when the tenant already has `maxSecrets` other secrets. */
  setSecret(tenant: string, name: string, value: string, maxSecrets: number): Promise<boolean>;
  /** The values of those of `names` that are set. */
  getSecrets(tenant: string, names: readonly string[]): Promise<Record<string, string>>;
  listSecrets(tenant: string): Promise<string[]>;
  deleteSecret(tenant: string, name: string): Promise<boolean>;
  close(): Promise<void>;
}
