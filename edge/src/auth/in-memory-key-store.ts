import type { ApiKeyRecord, KeyStore } from './key-store.ts';

/**
 * KeyStore in this process's memory: keys live as long as the process. For the embedded default
 * and tests; a fleet of edges shares a RedisKeyStore instead.
 *
 * @example
 *   const keys = new ApiKeys({ store: new InMemoryKeyStore(), secret });
 */
export class InMemoryKeyStore implements KeyStore {
  readonly #records = new Map<string, ApiKeyRecord>();

  async put(record: ApiKeyRecord): Promise<void> {
    this.#records.set(record.id, structuredClone(record));
  }

  async get(id: string): Promise<ApiKeyRecord | undefined> {
    const record = this.#records.get(id);
    return record === undefined ? undefined : structuredClone(record);
  }

  async list(tenant?: string): Promise<ApiKeyRecord[]> {
    return [...this.#records.values()]
      .filter((record) => tenant === undefined || record.tenant === tenant)
      .sort((a, b) => a.createdAt - b.createdAt)
      .map((record) => structuredClone(record));
  }

  async close(): Promise<void> {}
}
