import type { TimelineEvent } from './timeline.ts';

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
 * Appends are batches whose seqs must continue the stored log exactly (first seq = last + 1,
 * then +1 each); anything else rejects with `timeline_seq_conflict`, which fences a stale writer
 * after a handover.
 *
 * @example
 *   await store.append([event]);
 *   for await (const e of store.tail('s1', { fromSeq: 1, signal })) console.log(e.type);
 */
export interface TimelineStore {
  append(events: readonly TimelineEvent[]): Promise<void>;
  read(session: string, options?: TimelineReadOptions): Promise<TimelineEvent[]>;
  lastSeq(session: string): Promise<number>;
  /** Yields stored events from `fromSeq`, then new ones as they are appended, until the signal aborts. */
  tail(session: string, options: { fromSeq?: number; signal: AbortSignal }): AsyncIterable<TimelineEvent>;
  /** Removes a session's timeline (retention). */
  delete(session: string): Promise<void>;
  close(): Promise<void>;
}
