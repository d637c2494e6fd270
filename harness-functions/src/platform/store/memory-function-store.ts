import type { FunctionSpec, InvocationLogEntry } from '@venus/protocol';
import type { FunctionStore, StoredVersion } from './function-store.ts';

interface TenantData {
  /** Latest version number per name. */
  counters: Map<string, number>;
  versions: Map<string, Map<number, StoredVersion>>;
  logs: Map<string, InvocationLogEntry[]>;
  secrets: Map<string, string>;
}

/**
 * Function store in process memory: the embedded default and the reference for the Redis store.
 * Values are deep-copied in and out, so callers cannot change what is stored by mutating results.
 *
 * @example
 *   const catalog = new FunctionPlatform({ store: new MemoryFunctionStore() });
 */
export class MemoryFunctionStore implements FunctionStore {
  readonly #tenants = new Map<string, TenantData>();

  async putVersion(tenant: string, spec: FunctionSpec, deployedAtMs: number, keepVersions: number): Promise<number> {
    const data = this.#tenant(tenant);
    const version = (data.counters.get(spec.name) ?? 0) + 1;
    data.counters.set(spec.name, version);
    const versions = data.versions.get(spec.name) ?? new Map<number, StoredVersion>();
    versions.set(version, structuredClone({ name: spec.name, version, deployedAtMs, spec }));
    versions.delete(version - keepVersions);
    data.versions.set(spec.name, versions);
    return version;
  }

  async getVersion(tenant: string, name: string, version?: number): Promise<StoredVersion | null> {
    const data = this.#tenants.get(tenant);
    const wanted = version ?? data?.counters.get(name);
    const found = wanted === undefined ? undefined : data?.versions.get(name)?.get(wanted);
    return found === undefined ? null : structuredClone(found);
  }

  async listVersions(tenant: string, name: string): Promise<StoredVersion[]> {
    const versions = this.#tenants.get(tenant)?.versions.get(name);
    return versions === undefined
      ? []
      : [...versions.values()].sort((a, b) => a.version - b.version).map((v) => structuredClone(v));
  }

  async listLatest(tenant: string): Promise<StoredVersion[]> {
    const data = this.#tenants.get(tenant);
    if (data === undefined) return [];
    const latest: StoredVersion[] = [];
    for (const [name, version] of data.counters) {
      const found = data.versions.get(name)?.get(version);
      if (found !== undefined) latest.push(structuredClone(found));
    }
    return latest.sort((a, b) => a.name.localeCompare(b.name));
  }

  async deleteFunction(tenant: string, name: string): Promise<boolean> {
    const data = this.#tenants.get(tenant);
    if (data === undefined || !data.counters.has(name)) return false;
    data.counters.delete(name);
    data.versions.delete(name);
    data.logs.delete(name);
    return true;
  }

  async appendLog(tenant: string, name: string, entry: InvocationLogEntry, keep: number): Promise<void> {
    const data = this.#tenant(tenant);
    const logs = data.logs.get(name) ?? [];
    logs.unshift(structuredClone(entry));
    logs.length = Math.min(logs.length, keep);
    data.logs.set(name, logs);
  }

  async readLogs(tenant: string, name: string, limit: number): Promise<InvocationLogEntry[]> {
    return structuredClone(this.#tenants.get(tenant)?.logs.get(name)?.slice(0, limit) ?? []);
  }

  async setSecret(tenant: string, name: string, value: string, maxSecrets: number): Promise<boolean> {
    const secrets = this.#tenant(tenant).secrets;
    if (!secrets.has(name) && secrets.size >= maxSecrets) return false;
    secrets.set(name, value);
    return true;
  }

  async getSecrets(tenant: string, names: readonly string[]): Promise<Record<string, string>> {
    const secrets = this.#tenants.get(tenant)?.secrets;
    const found: Record<string, string> = {};
    for (const name of names) {
      const value = secrets?.get(name);
      if (value !== undefined) found[name] = value;
    }
    return found;
  }

  async listSecrets(tenant: string): Promise<string[]> {
    return [...(this.#tenants.get(tenant)?.secrets.keys() ?? [])].sort();
  }

  async deleteSecret(tenant: string, name: string): Promise<boolean> {
    return this.#tenants.get(tenant)?.secrets.delete(name) ?? false;
  }

  async close(): Promise<void> {
    this.#tenants.clear();
  }

  #tenant(tenant: string): TenantData {
    let data = this.#tenants.get(tenant);
    if (data === undefined) {
      data = { counters: new Map(), versions: new Map(), logs: new Map(), secrets: new Map() };
      this.#tenants.set(tenant, data);
    }
    return data;
  }
}
