import {
  createLogger,
  type TimelineDraft,
  type TimelineEvent,
  type TimelineStore,
  toVenusError,
  type VenusError,
  type WorkerToEdgeFrame,
} from '@venus/protocol';

export interface TimelineWriterOptions {
  sessionId: string;
  store: Pick<TimelineStore, 'append' | 'read'>;
  emit: (frame: WorkerToEdgeFrame) => void;
  /** Last seq already stored for this session (0 for a new one). */
  startSeq: number;
  /** Session clock in ms. */
  nowMs: () => number;
  /** Chunk that events are stamped with unless the caller names one (the chunk in progress). */
  currentChunk: () => number;
  /** Another writer owns the timeline (the store refused our seqs): this writer must stop. */
  onFenced: (message: string) => void;
  /** The store stayed unavailable past the writer's bound: the session cannot go on safely. */
  onUnavailable?: (message: string) => void;
  /** Waits before retry `attempt` (1, 2, …); injectable so tests need no real time. */
  retryDelay?: (attempt: number) => Promise<void>;
}

/** Events a writer holds while its store is unavailable (~7 minutes of 20 ms microphone frames). */
export const MAX_UNWRITTEN_EVENTS = 20_000;
/**
 * Written events a writer keeps to write again when the store loses the session's log (a Redis
 * restarted without persistence): at most this many, ~100 KB a session at typical event sizes.
 */
export const MAX_REWRITTEN_EVENTS = 256;
const RETRY_BASE_MS = 100;
const RETRY_MAX_MS = 5000;

const log = createLogger('gpu-worker.timeline-writer');

function defaultRetryDelay(attempt: number): Promise<void> {
  const ms = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** (attempt - 1));
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/**
 * The single writer of one session's timeline: stamps each event synchronously (seq, chunk, session
 * clock) and publishes it at once, then writes to the store in order, one batch at a time, without
 * ever blocking the caller.
 *
 * A store that fails (Redis restarting, a network blink) loses nothing: the batch goes back to the
 * head of the queue and is retried with backoff (100 ms doubling to 5 s) while new events queue
 * behind it, up to `MAX_UNWRITTEN_EVENTS`; past that the session is ended as `timeline_unavailable`
 * rather than dropping accepted events. A batch (or the first part of one) that the store had in
 * fact applied although the writer heard a failure or a seq conflict (a command resent after a
 * lost connection) is recognised (the stored events are ours, as stamped) and not written twice. A batch the store
 * refuses as `timeline_seq_conflict` while the store holds nothing of the session means the store
 * lost the log (Redis restarted without persistence): the writer starts the log again with the
 * last `MAX_REWRITTEN_EVENTS` it wrote and the batch, and records the seqs that were lost as a
 * `session.error` (`timeline_unavailable`), rather than fencing itself. A conflict for any other
 * reason means a newer incarnation writes this timeline now: the writer reports it and is fenced
 * (writes nothing more).
 */
export class TimelineWriter {
  private seqNo: number;
  private queue: TimelineEvent[] = [];
  private writing: Promise<void> | null = null;
  private fenced = false;
  private attempt = 0;
  /** Events in the batch being written. */
  private inFlight = 0;
  /** The newest events written, oldest first (at most MAX_REWRITTEN_EVENTS), contiguous up to the last write. */
  private written: TimelineEvent[] = [];
  /** A `session.closed` was written: the store may delete the log, which is then not a loss. */
  private ended = false;

  constructor(private readonly opts: TimelineWriterOptions) {
    this.seqNo = opts.startSeq;
  }

  /** Last seq stamped so far. */
  get seq(): number {
    return this.seqNo;
  }

  get isFenced(): boolean {
    return this.fenced;
  }

  /** The store is failing and the writer is retrying. */
  get inOutage(): boolean {
    return this.attempt > 0;
  }

  /** Stamps and publishes an event now; the store write follows in order. */
  append(draft: TimelineDraft, chunk = this.opts.currentChunk()): TimelineEvent {
    const { sessionId } = this.opts;
    const event = { ...draft, session: sessionId, seq: ++this.seqNo, chunk, atMs: this.opts.nowMs() } as TimelineEvent;
    if (this.fenced) return event;
    this.queue.push(event);
    if (this.queue.length + this.inFlight > MAX_UNWRITTEN_EVENTS) this.giveUp();
    this.flush();
    // The client's own microphone audio is stored, not echoed back: relaying it would double the
    // messages of every stream for nothing the edge or the client needs.
    if (event.type !== 'user.audio') this.opts.emit({ kind: 'timeline', session: sessionId, event });
    return event;
  }

  /** A `session.error` event: the session records the problem and lives on. */
  error(code: VenusError['code'], message: string, eventType?: string): void {
    this.append({
      stream: 'system',
      type: 'session.error',
      data: { code, message, ...(eventType ? { eventType } : {}) },
    });
  }

  /**
   * Resolves once every event stamped so far is in the store, or the writer was fenced, or (with
   * `untilOutage`) the store is failing: a closing session need not wait out an outage, its events
   * are still written when the store is back.
   */
  async flushed(untilOutage = false): Promise<void> {
    while (this.writing || (this.queue.length > 0 && !this.fenced)) {
      if (untilOutage && this.inOutage) return;
      this.flush();
      await this.writing;
    }
  }

  private flush(): void {
    if (this.writing || this.queue.length === 0 || this.fenced) return;
    const batch = this.queue;
    this.queue = [];
    this.inFlight = batch.length;
    this.writing = this.write(batch).then(() => {
      this.writing = null;
      this.inFlight = 0;
      this.flush();
    });
  }

  private async write(batch: TimelineEvent[]): Promise<void> {
    try {
      await this.opts.store.append(batch);
    } catch (err) {
      const e = toVenusError(err);
      if (e.code !== 'timeline_seq_conflict') return this.retryLater(batch, e);
      const ours = await this.storedOfOurs(batch);
      if (ours === 0) {
        if (await this.storeLostLog(batch)) return this.startAgain(batch);
        return this.fence(e);
      }
      if (ours < batch.length) {
        // The store holds the first part (what was in flight before the retried batch grew): the rest follows.
        this.wrote(batch.slice(0, ours));
        this.queue = batch.slice(ours).concat(this.queue);
        return;
      }
    }
    this.wrote(batch);
    if (this.attempt > 0) log.info({ session: this.opts.sessionId, attempts: this.attempt }, 'timeline store back');
    this.attempt = 0;
  }

  private wrote(batch: TimelineEvent[]): void {
    this.written.push(...batch);
    if (this.written.length > MAX_REWRITTEN_EVENTS * 2) this.written = this.written.slice(-MAX_REWRITTEN_EVENTS);
    if (batch.some((e) => e.type === 'session.closed')) this.ended = true;
  }

  /** The store holds nothing of a session this writer wrote to before (and did not end). */
  private async storeLostLog(batch: TimelineEvent[]): Promise<boolean> {
    if (this.ended || (batch[0]?.seq ?? 1) <= 1) return false;
    try {
      return (await this.opts.store.read(this.opts.sessionId, { limit: 1 })).length === 0;
    } catch {
      return false;
    }
  }

  /** Starts the lost log again from what this writer still holds, and records what was lost. */
  private async startAgain(batch: TimelineEvent[]): Promise<void> {
    const first = batch[0]?.seq ?? 1;
    const kept = this.written.filter((e) => e.seq < first).slice(-MAX_REWRITTEN_EVENTS);
    const rewrite = kept.concat(batch);
    try {
      await this.opts.store.append(rewrite, { afterLoss: true });
    } catch (err) {
      const e = toVenusError(err);
      // Someone else started the log in the meantime: that is a newer owner after all.
      if (e.code === 'timeline_seq_conflict') return this.fence(e);
      return this.retryLater(batch, e);
    }
    this.wrote(batch);
    this.attempt = 0;
    const lostUpTo = (rewrite[0]?.seq ?? first) - 1;
    if (lostUpTo === 0) {
      log.warn({ session: this.opts.sessionId }, 'the timeline store lost this session; every event was written again');
      return;
    }
    const message =
      `the timeline store lost this session's events up to seq ${lostUpTo} (it restarted without persistence); ` +
      `the ${kept.length} most recent were written again and recording goes on`;
    log.warn({ session: this.opts.sessionId, lostUpTo, rewritten: kept.length }, message);
    this.opts.emit({ kind: 'error', session: this.opts.sessionId, code: 'timeline_unavailable', message });
    this.error('timeline_unavailable', message);
  }

  /**
   * How many of the batch's first events the store already holds exactly as stamped here: a write
   * it applied although the reply was lost (a connection dropped mid-command, which ioredis sends
   * again on reconnect and which then conflicts with itself; or a failure before a retry that has
   * since grown). 0 when they are not ours (a newer owner) or cannot be read now: the safe side of
   * a fence.
   */
  private async storedOfOurs(batch: TimelineEvent[]): Promise<number> {
    const first = batch[0]?.seq ?? 0;
    const last = batch.at(-1)?.seq ?? 0;
    try {
      const stored = await this.opts.store.read(this.opts.sessionId, { fromSeq: first, toSeq: last });
      if (stored.length === 0 || stored.length > batch.length) return 0;
      return stored.every((event, i) => JSON.stringify(event) === JSON.stringify(batch[i])) ? stored.length : 0;
    } catch {
      return 0;
    }
  }

  private async retryLater(batch: TimelineEvent[], e: VenusError): Promise<void> {
    this.queue = batch.concat(this.queue);
    this.attempt += 1;
    if (this.attempt === 1) {
      const { sessionId } = this.opts;
      this.opts.emit({
        kind: 'error',
        session: sessionId,
        code: e.code,
        message: `timeline write failed, retrying: ${e.message}`,
      });
      log.warn({ err: e, session: sessionId }, 'timeline store failing; events held and retried');
    }
    await (this.opts.retryDelay ?? defaultRetryDelay)(this.attempt);
  }

  private fence(e: VenusError): void {
    const { sessionId } = this.opts;
    this.opts.emit({ kind: 'error', session: sessionId, code: e.code, message: `timeline write failed: ${e.message}` });
    this.fenced = true;
    this.queue = [];
    this.opts.onFenced('fenced: another writer owns this timeline');
  }

  private giveUp(): void {
    const message = `the timeline store has been unavailable for ${MAX_UNWRITTEN_EVENTS} events; ending the session`;
    log.error({ session: this.opts.sessionId, unwritten: this.queue.length + this.inFlight }, message);
    this.opts.emit({ kind: 'error', session: this.opts.sessionId, code: 'timeline_unavailable', message });
    this.fenced = true;
    this.queue = [];
    this.opts.onUnavailable?.(message);
  }
}
