import {
  type TimelineDraft,
  type TimelineEvent,
  type TimelineStore,
  toVenusError,
  type VenusError,
  type WorkerToEdgeFrame,
} from '@venus/protocol';

export interface TimelineWriterOptions {
  sessionId: string;
  store: Pick<TimelineStore, 'append'>;
  emit: (frame: WorkerToEdgeFrame) => void;
  /** Last seq already stored for this session (0 for a new one). */
  startSeq: number;
  /** Session clock in ms. */
  nowMs: () => number;
  /** Chunk that events are stamped with unless the caller names one (the chunk in progress). */
  currentChunk: () => number;
  /** Another writer owns the timeline (the store refused our seqs): this writer must stop. */
  onFenced: (message: string) => void;
}

/**
 * The single writer of one session's timeline: stamps each event synchronously (seq, chunk, session
 * clock) and publishes it at once, then writes to the store in order, one batch at a time, without
 * ever blocking the caller. A batch the store refuses as `timeline_seq_conflict` means a newer
 * incarnation writes this timeline now: the writer reports it and is fenced (writes nothing more).
 *
 * Memory: events wait in the queue only while a write is in flight; the queue is the events stamped
 * during one store round trip.
 */
export class TimelineWriter {
  private seqNo: number;
  private queue: TimelineEvent[] = [];
  private writing: Promise<void> | null = null;
  private fenced = false;

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

  /** Stamps and publishes an event now; the store write follows in order. */
  append(draft: TimelineDraft, chunk = this.opts.currentChunk()): TimelineEvent {
    const { sessionId } = this.opts;
    const event = { ...draft, session: sessionId, seq: ++this.seqNo, chunk, atMs: this.opts.nowMs() } as TimelineEvent;
    if (this.fenced) return event;
    this.queue.push(event);
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

  /** Resolves once every event stamped so far is in the store (or the writer was fenced). */
  async flushed(): Promise<void> {
    while (this.writing || (this.queue.length > 0 && !this.fenced)) {
      this.flush();
      await this.writing;
    }
  }

  private flush(): void {
    if (this.writing || this.queue.length === 0 || this.fenced) return;
    const batch = this.queue;
    this.queue = [];
    this.writing = this.opts.store.append(batch).then(
      () => {
        this.writing = null;
        this.flush();
      },
      (err: unknown) => {
        this.writing = null;
        const e = toVenusError(err);
        const { sessionId } = this.opts;
        this.opts.emit({
          kind: 'error',
          session: sessionId,
          code: e.code,
          message: `timeline write failed: ${e.message}`,
        });
        if (e.code === 'timeline_seq_conflict') {
          this.fenced = true;
          this.queue = [];
          this.opts.onFenced('fenced: another writer owns this timeline');
        }
      },
    );
  }
}
