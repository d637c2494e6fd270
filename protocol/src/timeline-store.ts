import type { TimelineEvent } from './timeline.ts';

export interface TimelineAppendOptions {
  /**
   * The writer found that the store lost this session's log (it holds nothing of it, while the
   * writer had written seqs before: a Redis restarted without persistence, or flushed). The batch
   * then starts a fresh log at its own first seq instead of at 1. With this option a store that
   * holds anything of the session refuses the batch (`timeline_seq_conflict`), so a stale writer is
   * still fenced.
   */
  afterLoss?: boolean;
}

export interface TimelineReadOptions {
  /** First seq to return (inclusive). Default 1. */
  fromSeq?: number;
  /** Last seq to return (inclusive). */
  toSeq?: number;
  limit?: number;
}

/**
 * Durable, replayable store of session timelines. Implementations: in-memory (embedded default)
 * and Redis Streams (production); one contract suite runs against both.
 *
 * Bounded: a store keeps at least the newest `maxEvents` of a session (older ones may be trimmed;
 * reads then start at the oldest kept seq, and seqs keep counting), and deletes ended sessions
 * after its retention (see `endSession`).
 *
 * Appends are batches whose seqs must continue the stored log exactly (first seq = last + 1,
 * then +1 each); anything else rejects with `timeline_seq_conflict`, which fences a stale writer
 * after a handover.
 *
 * @example
 *   await store.append([event]);
 *   for await (const e of store.tail('s1', { fromSeq: 1, signal })) console.log(e.type);
 */
export interface TimelineStore {
  append(events: readonly TimelineEvent[], options?: TimelineAppendOptions): Promise<void>;
  read(session: string, options?: TimelineReadOptions): Promise<TimelineEvent[]>;
  lastSeq(session: string): Promise<number>;
  /** Yields stored events from `fromSeq`, then new ones as they are appended, until the signal aborts. */
  tail(session: string, options: { fromSeq?: number; signal: AbortSignal }): AsyncIterable<TimelineEvent>;
  /** Removes a session's timeline at once. */
  delete(session: string): Promise<void>;
  /**
   * The session ended: its timeline is deleted once the store's retention for ended sessions has
   * passed (`VENUS_TIMELINE_RETENTION`, default 15 minutes). Appending a `session.closed` event
   * ends the session the same way. A `session.incarnation` appended after the end (the session
   * reopened) keeps it again; other late events (a work state settling after the close) do not.
   * Ending a session the store does not hold does nothing.
   */
  endSession(session: string): Promise<void>;
  close(): Promise<void>;
}
