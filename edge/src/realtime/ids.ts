/** Opaque random ids in OpenAI's style (`sess_…`, `event_…`, `resp_…`, `item_…`). */
export function randomId(prefix: string): string {
  return `${prefix}_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`;
}

/**
 * Ids for one connection's server events: a random stem per connection and a counter, so the hot
 * path (several events per 20 ms audio frame) does not draw randomness for each. Unique within
 * the connection, and across connections with the odds of `randomId`.
 *
 * @example
 *   const ids = new EventIds();
 *   ids.next(); // 'event_3f9c2a71d04e_1'
 */
export class EventIds {
  readonly #stem = `event_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}_`;
  #count = 0;

  next(): string {
    this.#count += 1;
    return this.#stem + this.#count.toString(36);
  }
}
