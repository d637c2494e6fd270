import { type TimelineEvent, VenusError, type WorkerToEdgeFrame } from '@venus/protocol';
import { describe, expect, it } from 'vitest';
import { MAX_UNWRITTEN_EVENTS, TimelineWriter } from './timeline-writer.ts';

/**
 * Fake store: keeps a log with the real seq rule; each append waits until the test releases it
 * ('ok', an error, 'applied-then-failed': stored, but the caller hears a failure, or
 * 'applied-then-resent': stored, and the caller hears the seq conflict of the same command sent
 * again, as ioredis resends a command in flight when its connection drops).
 */
type Outcome = 'ok' | 'applied-then-failed' | 'applied-then-resent' | Error;

class FakeGatedStore {
  readonly batches: TimelineEvent[][] = [];
  readonly stored: TimelineEvent[] = [];
  private releases: ((outcome: Outcome) => void)[] = [];
  append(events: readonly TimelineEvent[]): Promise<void> {
    this.batches.push([...events]);
    return new Promise((resolve, reject) => {
      this.releases.push((outcome) => {
        if (outcome instanceof Error) return reject(outcome);
        if ((events[0]?.seq ?? 0) !== (this.stored.at(-1)?.seq ?? 0) + 1)
          return reject(new VenusError('timeline_seq_conflict', 'seqs do not continue the log'));
        this.stored.push(...events);
        if (outcome === 'applied-then-failed') reject(new VenusError('internal_error', 'connection reset'));
        else if (outcome === 'applied-then-resent')
          reject(new VenusError('timeline_seq_conflict', 'seqs do not continue the log'));
        else resolve();
      });
    });
  }
  async read(_session: string, o: { fromSeq?: number; toSeq?: number } = {}): Promise<TimelineEvent[]> {
    return this.stored.filter((e) => e.seq >= (o.fromSeq ?? 1) && e.seq <= (o.toSeq ?? Number.MAX_SAFE_INTEGER));
  }
  release(outcome: Outcome = 'ok'): void {
    this.releases.shift()?.(outcome);
  }
}

const tick = () => new Promise((r) => setTimeout(r, 0));

function setup(startSeq = 0) {
  const store = new FakeGatedStore();
  const frames: WorkerToEdgeFrame[] = [];
  const fenced: string[] = [];
  const unavailable: string[] = [];
  const retries: number[] = [];
  const writer = new TimelineWriter({
    sessionId: 's1',
    store,
    emit: (f) => frames.push(f),
    startSeq,
    nowMs: () => 42,
    currentChunk: () => 7,
    onFenced: (m) => fenced.push(m),
    onUnavailable: (m) => unavailable.push(m),
    retryDelay: async (attempt) => {
      retries.push(attempt);
    },
  });
  return { store, frames, fenced, unavailable, retries, writer };
}

const text = (delta: string) =>
  ({ stream: 'assistant', type: 'assistant.text', data: { utteranceId: 'u', delta } }) as const;

describe('TimelineWriter', () => {
  it('stamps seq, chunk and session time at once, continuing the stored seqs', () => {
    const { writer, frames } = setup(10);
    const e = writer.append(text('a'));
    expect([e.seq, e.chunk, e.atMs, e.session]).toEqual([11, 7, 42, 's1']);
    expect(writer.append(text('b'), 3).chunk).toBe(3);
    expect(frames.map((f) => (f.kind === 'timeline' ? f.event.seq : 0))).toEqual([11, 12]);
  });

  it('writes one batch at a time, in order: events stamped during a write go in the next batch', async () => {
    const { writer, store } = setup();
    writer.append(text('a'));
    writer.append(text('b'));
    writer.append(text('c'));
    expect(store.batches.map((b) => b.map((e) => e.seq))).toEqual([[1]]);
    store.release();
    await tick();
    expect(store.batches.map((b) => b.map((e) => e.seq))).toEqual([[1], [2, 3]]);
    const done = writer.flushed();
    store.release();
    await done;
  });

  it('does not echo the microphone audio to the edge', () => {
    const { writer, frames } = setup();
    const audio = { segmentId: 'u:1', track: 'user', offsetMs: 0, durationMs: 20, sampleRateHz: 16_000 } as const;
    writer.append({ stream: 'user', type: 'user.audio', data: { inputSeq: 1, audio, durationMs: 20 } });
    expect(frames).toEqual([]);
  });

  it('is fenced by a seq conflict: it reports it, drops what waits and writes nothing more', async () => {
    const { writer, store, frames, fenced } = setup();
    // Another writer already wrote seq 1: an event of its own (another stamp), not this writer's.
    store.stored.push({ ...writer.append(text('theirs')), atMs: 1 });
    writer.append(text('b'));
    store.release();
    await tick();
    expect(fenced).toHaveLength(1);
    expect(writer.isFenced).toBe(true);
    expect(frames.at(-1)).toMatchObject({ kind: 'error', code: 'timeline_seq_conflict' });
    writer.append(text('c'));
    await writer.flushed();
    expect(store.batches).toHaveLength(1);
  });

  // Regression (issue 15, "Redis restart loses live sessions"): a failed write dropped its batch, so
  // the next batch did not continue the log and the session fenced itself and ended.
  it('loses nothing when the store fails: the batch is retried in order, new events behind it', async () => {
    const { writer, store, frames, fenced, retries } = setup();
    writer.append(text('a'));
    store.release(new VenusError('internal_error', 'redis down'));
    await tick();
    writer.append(text('b'));
    expect(writer.inOutage).toBe(true);
    store.release(new VenusError('internal_error', 'redis still down'));
    await tick();
    store.release();
    await tick();
    await writer.flushed();
    expect(store.stored.map((e) => e.seq)).toEqual([1, 2]);
    expect(retries).toEqual([1, 2]);
    expect(frames.filter((f) => f.kind === 'error')).toHaveLength(1); // one report per outage
    expect(fenced).toEqual([]);
    expect(writer.inOutage).toBe(false);
  });

  it('does not write a batch twice when the store applied it before failing', async () => {
    const { writer, store, fenced } = setup();
    writer.append(text('a'));
    writer.append(text('b'));
    store.release(); // seq 1
    await tick();
    store.release('applied-then-failed'); // seq 2 stored, the writer hears a failure
    await tick();
    store.release(); // the retry conflicts; the stored events are ours
    await tick();
    writer.append(text('c'));
    store.release();
    await writer.flushed();
    expect(store.stored.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(fenced).toEqual([]);
  });

  // Regression (Redis SIGKILLed with AOF on): the append in flight was applied and made durable, its
  // reply was lost with the connection, and ioredis sent it again: the seq conflict that came back
  // fenced a live session.
  it('takes a conflict on events it had itself stored (a resent command) as written, not as a fence', async () => {
    const { writer, store, fenced } = setup();
    writer.append(text('a'));
    store.release('applied-then-resent');
    await tick();
    writer.append(text('b'));
    await tick();
    store.release();
    await writer.flushed();
    expect(store.stored.map((e) => e.seq)).toEqual([1, 2]);
    expect(fenced).toEqual([]);
  });

  it('writes only the rest when the store had applied the first part of a grown retried batch', async () => {
    const { writer, store, fenced } = setup();
    writer.append(text('a'));
    writer.append(text('b'));
    store.release('applied-then-failed');
    await tick();
    // The retry carries a and b; the store holds a already, so it is refused, and b follows alone.
    store.release();
    await tick();
    store.release();
    await writer.flushed();
    expect(store.stored.map((e) => e.seq)).toEqual([1, 2]);
    expect(store.batches.map((b) => b.map((e) => e.seq))).toEqual([[1], [1, 2], [2]]);
    expect(fenced).toEqual([]);
  });

  it('a closing session does not wait out an outage', async () => {
    const { writer, store } = setup();
    writer.append(text('a'));
    store.release(new VenusError('internal_error', 'redis down'));
    await tick();
    await writer.flushed(true);
    expect(store.stored).toEqual([]);
  });

  it(`ends the session as timeline_unavailable past ${MAX_UNWRITTEN_EVENTS} held events, never dropping silently`, async () => {
    const { writer, store, frames, unavailable } = setup();
    writer.append(text('first'));
    store.release(new VenusError('internal_error', 'redis down'));
    await tick();
    for (let i = 0; i < MAX_UNWRITTEN_EVENTS; i++) writer.append(text('x'));
    expect(unavailable).toHaveLength(1);
    expect(frames.filter((f) => f.kind === 'error' && f.code === 'timeline_unavailable')).toHaveLength(1);
    expect(writer.isFenced).toBe(true);
  });
});
