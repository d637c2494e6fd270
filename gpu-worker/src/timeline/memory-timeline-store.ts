import type { TimelineAppendOptions, TimelineEvent, TimelineReadOptions, TimelineStore } from '@venus/protocol';
import { VenusError } from '@venus/protocol';
import { checkAppendBatch, seqConflict } from './append-batch.ts';
import { lifeChange, type TimelineBounds, timelineBounds } from './timeline-bounds.ts';

interface SessionLog {
  /** The newest events of the session: events[i].seq === firstSeq + i, no gaps. */
  events: TimelineEvent[];
  /** Seq of events[0]; above 1 once the oldest events were trimmed. */
  firstSeq: number;
  /** Wake-ups for tails waiting on this session; each fires once and removes itself. */
  waiters: Set<() => void>;
}

/** The most often the store looks for ended sessions past their retention without being called. */
const SWEEP_EVERY_MS = 10_000;
/** Trim only once a log is this much over its bound, so trimming costs O(1) per append on average. */
const TRIM_SLACK = 1.1;

/**
 * Timeline store that keeps each session's log in an array: the embedded default, and the reference
 * the Redis store is held to by the shared contract suite. Events are stored and returned by
 * reference, so callers must treat them as immutable (as they do any timeline event).
 *
 * Memory bound: each live session keeps at most ~1.1 × `maxEvents` events (default 50,000, a few
 * hundred bytes each now that audio is referenced, not inlined); an ended session is deleted
 * `retentionMs` after it ended (default 15 min). Expired sessions are swept on every call and on an
 * unref'd timer.
 *
 * @example
 *   const store = new MemoryTimelineStore({ retentionMs: 15 * 60_000 });
 *   await store.append([{ session: 's1', seq: 1, chunk: 0, atMs: 0, stream: 'system',
 *     type: 'session.closed', data: { reason: 'done' } }]);
 *   await store.lastSeq('s1'); // 1, until the retention has passed
 */
export class MemoryTimelineStore implements TimelineStore {
  readonly #sessions = new Map<string, SessionLog>();
  readonly #closed = new AbortController();
  readonly #bounds: Required<TimelineBounds>;
  /** Ended sessions with the time their timeline goes; in end order, so the sweep stops at the first live one. */
  readonly #ended = new Map<string, number>();
  readonly #timer: ReturnType<typeof setInterval>;

  constructor(options: TimelineBounds = {}) {
    this.#bounds = timelineBounds(options);
    const every = Math.max(1000, Math.min(SWEEP_EVERY_MS, this.#bounds.retentionMs));
    this.#timer = setInterval(() => this.#sweep(), every);
    this.#timer.unref();
  }

  async append(events: readonly TimelineEvent[], options: TimelineAppendOptions = {}): Promise<void> {
    // No await before the write: appends issued back to back are applied in call order.
    this.#assertOpen();
    this.#sweep();
    const batch = checkAppendBatch(events);
    if (batch === null) return;
    const log = this.#log(batch.session);
    const last = lastOf(log);
    // A log that lost everything (see TimelineAppendOptions.afterLoss) starts again at the batch;
    // with that option, a log that holds anything refuses the batch.
    if (options.afterLoss) {
      if (log.events.length > 0 || last > 0) throw seqConflict(batch.session, last, batch.firstSeq);
      log.firstSeq = batch.firstSeq;
    } else if (batch.firstSeq !== last + 1) throw seqConflict(batch.session, last, batch.firstSeq);
    log.events.push(...events);
    if (log.events.length > this.#bounds.maxEvents * TRIM_SLACK) {
      const trimmed = log.events.length - this.#bounds.maxEvents;
      log.events.splice(0, trimmed);
      log.firstSeq += trimmed;
    }
    const change = lifeChange(events);
    if (change === 'opened') this.#ended.delete(batch.session);
    if (change === 'closed') this.#end(batch.session);
    const waiters = [...log.waiters];
    log.waiters.clear();
    for (const wake of waiters) wake();
  }

  async read(session: string, options: TimelineReadOptions = {}): Promise<TimelineEvent[]> {
    this.#assertOpen();
    this.#sweep();
    const log = this.#sessions.get(session);
    if (log === undefined) return [];
    const from = Math.max(log.firstSeq, options.fromSeq ?? 1);
    const to = Math.min(lastOf(log), options.toSeq ?? Number.POSITIVE_INFINITY);
    const limit = options.limit ?? Number.POSITIVE_INFINITY;
    if (to < from || limit <= 0) return [];
    return log.events.slice(from - log.firstSeq, Math.min(to, from - 1 + limit) - log.firstSeq + 1);
  }

  async lastSeq(session: string): Promise<number> {
    this.#assertOpen();
    this.#sweep();
    const log = this.#sessions.get(session);
    return log === undefined ? 0 : lastOf(log);
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
        // Events trimmed away are skipped: the tail goes on from the oldest one kept.
        next = Math.max(next, log.firstSeq);
        const event = log.events[next - log.firstSeq];
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
    this.#ended.delete(session);
    const log = this.#sessions.get(session);
    this.#sessions.delete(session);
    // Waiting tails move over to the fresh log the next append creates.
    for (const wake of log?.waiters ?? []) wake();
  }

  async endSession(session: string): Promise<void> {
    this.#end(session);
  }

  /** Ends every open tail; later calls reject. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#closed.abort();
  }

  /** Sessions whose timelines are held now (live, or ended within the retention). */
  get sessions(): number {
    return this.#sessions.size;
  }

  #end(session: string): void {
    if (!this.#sessions.has(session)) return;
    if (this.#bounds.retentionMs === 0) {
      void this.delete(session);
      return;
    }
    // Re-inserted so the map stays in order of expiry.
    this.#ended.delete(session);
    this.#ended.set(session, this.#bounds.now() + this.#bounds.retentionMs);
  }

  #sweep(): void {
    const now = this.#bounds.now();
    for (const [session, expiresAt] of this.#ended) {
      if (expiresAt > now) return;
      void this.delete(session);
    }
  }

  #log(session: string): SessionLog {
    let log = this.#sessions.get(session);
    if (log === undefined) {
      log = { events: [], firstSeq: 1, waiters: new Set() };
      this.#sessions.set(session, log);
    }
    return log;
  }

  #assertOpen(): void {
    if (this.#closed.signal.aborted) throw new VenusError('internal_error', 'timeline store is closed');
  }
}

function lastOf(log: SessionLog): number {
  return log.firstSeq + log.events.length - 1;
}
