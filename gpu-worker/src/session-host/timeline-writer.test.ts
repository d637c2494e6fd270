import { type TimelineEvent, VenusError, type WorkerToEdgeFrame } from '@venus/protocol';
import { describe, expect, it } from 'vitest';
import { TimelineWriter } from './timeline-writer.ts';

/** Fake store: each append waits until the test releases it, or rejects as the test says. */
class FakeGatedStore {
  readonly batches: TimelineEvent[][] = [];
  private releases: ((err?: Error) => void)[] = [];
  append(events: readonly TimelineEvent[]): Promise<void> {
    this.batches.push([...events]);
    return new Promise((resolve, reject) => {
      this.releases.push((err) => (err ? reject(err) : resolve()));
    });
  }
  release(err?: Error): void {
    this.releases.shift()?.(err);
  }
}

const tick = () => new Promise((r) => setTimeout(r, 0));

function setup(startSeq = 0) {
  const store = new FakeGatedStore();
  const frames: WorkerToEdgeFrame[] = [];
  const fenced: string[] = [];
  const writer = new TimelineWriter({
    sessionId: 's1',
    store,
    emit: (f) => frames.push(f),
    startSeq,
    nowMs: () => 42,
    currentChunk: () => 7,
    onFenced: (m) => fenced.push(m),
  });
  return { store, frames, fenced, writer };
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
    writer.append(text('a'));
    writer.append(text('b'));
    store.release(new VenusError('timeline_seq_conflict', 'seq 1 does not continue the log'));
    await tick();
    expect(fenced).toHaveLength(1);
    expect(writer.isFenced).toBe(true);
    expect(frames.at(-1)).toMatchObject({ kind: 'error', code: 'timeline_seq_conflict' });
    writer.append(text('c'));
    await writer.flushed();
    expect(store.batches).toHaveLength(1);
  });

  it('reports another write failure and goes on with the next events', async () => {
    const { writer, store, frames, fenced } = setup();
    writer.append(text('a'));
    store.release(new VenusError('internal_error', 'redis down'));
    await tick();
    expect(frames.at(-1)).toMatchObject({ kind: 'error', code: 'internal_error' });
    writer.append(text('b'));
    expect(store.batches.at(-1)?.map((e) => e.seq)).toEqual([2]);
    expect(fenced).toEqual([]);
  });
});
