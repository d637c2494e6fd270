import type { RecogniserEvent, RecogniserStream } from '@venus/protocol';
import { describe, expect, it } from 'vitest';
import { UtteranceRecognition } from './utterance-recognition.ts';

/** A fake recogniser stream: records what it is fed; each utterance's final says how many samples it got. */
class FakeStream implements RecogniserStream {
  readonly unknownWords = [];
  readonly pushed: number[][] = [[]];
  private readonly queue: RecogniserEvent[] = [];
  private wake: (() => void) | undefined;
  private done = false;
  readonly events: AsyncIterable<RecogniserEvent> = {
    [Symbol.asyncIterator]: async function* (this: FakeStream) {
      for (;;) {
        const next = this.queue.shift();
        if (next) yield next;
        else if (this.done) return;
        else await new Promise<void>((r) => (this.wake = r));
      }
    }.bind(this),
  };

  push(pcm: Int16Array): void {
    this.pushed.at(-1)!.push(pcm.length);
    this.emit({ type: 'partial', utterance: this.pushed.length - 1, text: 'stop', score: -30, audioMs: 0 });
  }
  endUtterance(): void {
    const samples = this.pushed.at(-1)!.reduce((a, b) => a + b, 0);
    const utterance = this.pushed.length - 1;
    this.pushed.push([]);
    this.emit({
      type: 'final',
      utterance,
      text: `u${utterance}`,
      score: -30,
      confidence: 0.9,
      inGrammar: true,
      audioMs: samples / 16,
    });
  }
  async close(): Promise<void> {
    this.done = true;
    this.wake?.();
  }
  private emit(e: RecogniserEvent): void {
    this.queue.push(e);
    this.wake?.();
  }
}

const chunk = (seq: number, samples = 2560) => ({ seq, pcm: new Int16Array(samples) });
const settle = () => new Promise((r) => setTimeout(r, 0));

describe('UtteranceRecognition', () => {
  it('sends each speech stretch with a pre-roll, ends it with the VAD, and returns finals with their inputs', async () => {
    const stream = new FakeStream();
    let opened = 0;
    const rec = new UtteranceRecognition({
      open: async () => {
        opened++;
        return stream;
      },
    });
    rec.feed([chunk(1)], false, false);
    rec.feed([chunk(2)], false, false);
    rec.feed([chunk(3)], true, true);
    rec.feed([chunk(4)], true, true);
    rec.feed([chunk(5)], true, false);
    await settle();
    rec.feed([chunk(6)], false, false);
    rec.feed([chunk(7)], true, false);
    await settle();
    await settle();
    expect(opened).toBe(1);
    // 300 ms of pre-roll (4800 samples) from inputs 1-2, then inputs 3-5; the second stretch gets input 6 as pre-roll.
    expect(stream.pushed[0]!.reduce((a, b) => a + b, 0)).toBe(4800 + 3 * 2560);
    expect(stream.pushed[1]!.reduce((a, b) => a + b, 0)).toBe(2560 + 2560);
    const finals = rec.takeFinals();
    expect(finals.map((f) => [f.final.text, f.fromInputSeq, f.toInputSeq])).toEqual([
      ['u0', 3, 5],
      ['u1', 7, 7],
    ]);
    expect(rec.takeFinals()).toEqual([]);
    await rec.close();
  });

  it('offers the partial of the utterance in progress only', async () => {
    const stream = new FakeStream();
    const rec = new UtteranceRecognition({ open: async () => stream });
    rec.feed([chunk(1)], true, true);
    await settle();
    await settle();
    expect(rec.partial).toBe('stop');
    rec.feed([chunk(2)], true, false);
    expect(rec.partial).toBe('');
    await rec.close();
  });

  it('ends an utterance that outlasts 15 s of speech', async () => {
    const stream = new FakeStream();
    const rec = new UtteranceRecognition({ open: async () => stream });
    for (let seq = 1; seq <= 20; seq++) rec.feed([chunk(seq, 16_000)], true, true);
    await settle();
    await settle();
    expect(rec.takeFinals().map((f) => [f.fromInputSeq, f.toInputSeq])).toEqual([[1, 15]]);
    await rec.close();
  });

  it('goes on without words when the stream cannot be opened', async () => {
    const failures: unknown[] = [];
    const rec = new UtteranceRecognition({
      open: async () => {
        throw new Error('rate_limited');
      },
      onUnavailable: (err) => failures.push(err),
    });
    rec.feed([chunk(1)], true, false);
    await settle();
    expect(rec.available).toBe(false);
    expect(failures).toHaveLength(1);
    rec.feed([chunk(2)], true, false);
    expect(rec.takeFinals()).toEqual([]);
    await rec.close();
  });
});
