/**
 * A session's inputs behind their fences: a step takes, in order, exactly the inputs whose
 * `inputSeq` is at most its cutoff; later ones wait for a later step. Inputs without a sequence
 * number (private prefills, the model's own bookkeeping) pass any fence.
 *
 * @example
 *   const fence = new InputFence<string>();
 *   fence.push(1, 'a');
 *   fence.push(2, 'b');
 *   fence.take(1); // ['a']
 */
export class InputFence<T> {
  private queue: Array<{ seq: number | null; item: T }> = [];

  push(seq: number | null, item: T): void {
    this.queue.push({ seq, item });
  }

  /** Puts an input without a sequence number ahead of everything waiting. */
  unshift(item: T): void {
    this.queue.unshift({ seq: null, item });
  }

  take(cutoff: number): T[] {
    const taken: T[] = [];
    const keep: Array<{ seq: number | null; item: T }> = [];
    for (const q of this.queue) {
      if (q.seq !== null && q.seq > cutoff) keep.push(q);
      else taken.push(q.item);
    }
    this.queue = keep;
    return taken;
  }

  clear(): void {
    this.queue = [];
  }
}
