/**
 * A small least-recently-used map: a `Map` keeps insertion order, so re-inserting on read moves an
 * entry to the young end and the oldest entry is the first key.
 *
 * @example
 *   const cache = new LruCache<string, Int16Array>(64);
 *   cache.set('en-us\nHello.', pcm);
 */
export class LruCache<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(readonly capacity: number) {}

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
