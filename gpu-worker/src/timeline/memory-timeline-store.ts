import type { TimelineEvent, TimelineReadOptions, TimelineStore } from '@venus/protocol';
import { VenusError } from '@venus/protocol';
import { checkAppendBatch, seqConflict } from './append-batch.ts';

interface SessionLog {
  /** events[i].seq === i + 1: logs start at seq 1 and never have gaps. */
  events: TimelineEvent[];
  /** Wake-ups for tails waiting on this session; each fires once and removes itself. */
  waiters: Set<() => void>;
}

/**
 * Timeline store that keeps each session's log in an array: the embedded default, and the reference
 * the Redis store is held to by the shared contract suite. Events are stored and returned by
 * reference, so callers must treat them as immutable (as they do any timeline event).
 *
 * @example
 *   const store = new MemoryTimelineStore();
 *   await store.append([{ session: 's1', seq: 1, chunk: 0, atMs: 0, stream: 'system',
 *     type: 'session.closed', data: { reason: 'done' } }]);
 *   await store.lastSeq('s1'); // 1
 */
export class MemoryTimelineStore implements TimelineStore {
  readonly #sessions = new Map<string, SessionLog>();
  readonly #closed = new AbortController();

  async append(events: readonly TimelineEvent[]): Promise<void> {
    // No await before the write: appends issued back to back are applied in call order.
    this.#assertOpen();
    const batch = checkAppendBatch(events);
    if (batch === null) return;
    const log = this.#log(batch.session);
    const last = log.events.length;
    if (batch.firstSeq !== last + 1) throw seqConflict(batch.session, last, batch.firstSeq);
    log.events.push(...events);
    const waiters = [...log.waiters];
    log.waiters.clear();
    for (const wake of waiters) wake();
  }

  async read(session: string, options: TimelineReadOptions = {}): Promise<TimelineEvent[]> {
    this.#assertOpen();
    const events = this.#sessions.get(session)?.events ?? [];
    const from = Math.max(1, options.fromSeq ?? 1);
    const to = Math.min(events.length, options.toSeq ?? events.length);
    const limit = options.limit ?? Number.POSITIVE_INFINITY;
    if (to < from || limit <= 0) return [];
    return events.slice(from - 1, Math.min(to, from - 1 + limit));
  }

  async lastSeq(session: string): Promise<number> {
    this.#assertOpen();
    return this.#sessions.get(session)?.events.length ?? 0;
  }

  async *tail(session: string, options: { fromSeq?: number; signal: AbortSignal }): AsyncIterable<TimelineEvent> {
    const { signal } = options;
    let next = Math.max(1, options.fromSeq ?? 1);
    let wake: (() => void) | undefined;
    const onStop = () => wake?.();
    signal.addEventListener('abort', onStop);
    this.#closed.signal.addEventListener('abort', onStop);
    try {
      while (!signal.aborted && !this.#closed.signal.aborted) {
        // Looked up each round: delete() replaces the log, and a tail keeps following the session.
        const log = this.#log(session);
        const event = log.events[next - 1];
        if (event !== undefined) {
          next++;
          yield event;
          continue;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
          log.waiters.add(resolve);
        });
        log.waiters.delete(wake!);
        wake = undefined;
      }
    } finally {
      const log = this.#sessions.get(session);
      if (log !== undefined) {
        if (wake !== undefined) log.waiters.delete(wake);
        // A tail on a session nobody wrote to must not leave an empty log behind.
        if (log.events.length === 0 && log.waiters.size === 0) this.#sessions.delete(session);
      }
      signal.removeEventListener('abort', onStop);
      this.#closed.signal.removeEventListener('abort', onStop);
    }
  }

  async delete(session: string): Promise<void> {
    const log = this.#sessions.get(session);
    this.#sessions.delete(session);
    // Waiting tails move over to the fresh log the next append creates.
    for (const wake of log?.waiters ?? []) wake();
  }

  /** Ends every open tail; later calls reject. */
  async close(): Promise<void> {
    this.#closed.abort();
  }

  #log(session: string): SessionLog {
    let log = this.#sessions.get(session);
    if (log === undefined) {
      log = { events: [], waiters: new Set() };
      this.#sessions.set(session, log);
    }
    return log;
  }

  #assertOpen(): void {
    if (this.#closed.signal.aborted) throw new VenusError('internal_error', 'timeline store is closed');
  }
}
