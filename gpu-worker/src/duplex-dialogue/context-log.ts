/**
 * What a dialogue's context keeps of the conversation, bounded to its last `limit` entries, in
 * order; entries are objects a dialogue may later rewrite (an utterance's text shrinks to what was
 * heard). Nothing is added once the dialogue closed.
 *
 * @example
 *   const log = new ContextLog<{ role: string; text: string }>(200);
 *   const entry = log.push({ role: 'user', text: 'hi' });
 */
export class ContextLog<T> {
  readonly entries: T[] = [];
  closed = false;

  constructor(private readonly limit: number) {}

  push(entry: T): T {
    if (this.closed) return entry;
    this.entries.push(entry);
    if (this.entries.length > this.limit) this.entries.splice(0, this.entries.length - this.limit);
    return entry;
  }

  remove(entry: T): void {
    const at = this.entries.indexOf(entry);
    if (at >= 0) this.entries.splice(at, 1);
  }

  includes(entry: T): boolean {
    return this.entries.includes(entry);
  }
}
