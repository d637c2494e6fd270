import { describe, expect, it } from 'vitest';
import { FakeClock } from '../testing/fake-clock.ts';
import { PacedG711Sender, type PlayoutMark } from './paced-g711-sender.ts';

function setup(options: { maxQueuedFrames?: number; markEveryMs?: number } = {}) {
  const clock = new FakeClock();
  const sent: { frame: Uint8Array; first: boolean; at: number }[] = [];
  const log: (string | PlayoutMark)[] = [];
  const sender = new PacedG711Sender({
    law: 'pcmu',
    clock,
    leadMs: 40,
    ...options,
    sendFrame: (frame, _id, first) => {
      sent.push({ frame, first, at: clock.now() });
      log.push('frame');
    },
    markReached: (mark) => log.push(mark),
  });
  return { clock, sent, log, sender };
}

/** `ms` of 8 kHz bytes, each byte its own sample index mod 200 (so frames can be told apart). */
const audio = (ms: number, from = 0) => Uint8Array.from({ length: ms * 8 }, (_, i) => (from + i) % 200);

describe('PacedG711Sender', () => {
  it('sends 20 ms frames at the pace they play, no further ahead than the lead', () => {
    const { clock, sent, sender } = setup();
    sender.enqueue('u1', audio(200), 0, 200);
    // Frames due within the 40 ms lead go at once: 0, 20 and 40 ms.
    expect(sent.length).toBe(3);
    clock.advance(100, 5);
    expect(sent.length).toBe(8);
    clock.advance(200, 5);
    expect(sent.length).toBe(10);
    expect(sent.every((s) => s.frame.length === 160)).toBe(true);
    expect(sent.map((s) => s.first)).toEqual([true, ...Array(9).fill(false)]);
    // The bytes arrive in order, whole.
    expect(Buffer.concat(sent.map((s) => s.frame))).toEqual(Buffer.from(audio(200)));
  });

  it('puts a mark after each chunk and every 240 ms within one, after the frames before it', () => {
    const { clock, log, sender } = setup();
    sender.enqueue('u1', audio(500), 0, 500);
    sender.enqueue('u1', audio(100), 500, 100);
    clock.advance(1000, 10);
    const marks = log.filter((e): e is PlayoutMark => typeof e !== 'string');
    expect(marks).toEqual([
      { utteranceId: 'u1', playedMs: 240 },
      { utteranceId: 'u1', playedMs: 480 },
      { utteranceId: 'u1', playedMs: 500 },
      { utteranceId: 'u1', playedMs: 600 },
    ]);
    // Each mark follows exactly the frames whose audio it accounts for.
    const framesBefore = (playedMs: number) =>
      log.slice(
        0,
        log.findIndex((e) => typeof e !== 'string' && e.playedMs === playedMs),
      ).length;
    expect(framesBefore(240)).toBe(12);
    expect(framesBefore(480)).toBe(12 + 1 + 12);
  });

  it("carries a chunk's partial frame into the next chunk, and pads it when the utterance finishes", () => {
    const { clock, sent, log, sender } = setup();
    sender.enqueue('u1', audio(30), 0, 30); // one frame and half of another
    sender.enqueue('u1', audio(25, 240), 30, 25);
    sender.finish('u1');
    clock.advance(200, 10);
    expect(sent.length).toBe(3);
    expect(Buffer.concat(sent.map((s) => s.frame)).subarray(0, 440)).toEqual(
      Buffer.concat([Buffer.from(audio(30)), Buffer.from(audio(25, 240))]),
    );
    expect([...sent[2]!.frame.subarray(120)].every((b) => b === 0xff)).toBe(true); // μ-law silence
    const marks = log.filter((e): e is PlayoutMark => typeof e !== 'string').map((m) => m.playedMs);
    expect(marks).toEqual([30, 55]);
    // The 30 ms mark waited for the frame holding its last byte (the second).
    expect(log.indexOf(log.find((e) => typeof e !== 'string')!)).toBe(2);
  });

  it('pads a partial frame that waits too long for more audio', () => {
    const { clock, sent, sender } = setup();
    sender.enqueue('u1', audio(10), 0, 10);
    expect(sent.length).toBe(0);
    clock.advance(100, 10);
    expect(sent.length).toBe(1);
  });

  it('flush drops every frame and mark not yet sent and returns the utterances cut', () => {
    const { clock, sent, log, sender } = setup();
    sender.enqueue('u1', audio(1000), 0, 1000);
    clock.advance(100, 10);
    const before = sent.length;
    expect(sender.flush()).toEqual(['u1']);
    expect(sender.queuedMs).toBe(0);
    clock.advance(2000, 10);
    expect(sent.length).toBe(before);
    expect(log.some((e) => typeof e !== 'string' && e.playedMs === 1000)).toBe(false);
    expect(sender.stats.framesFlushed).toBe(50 - before);
    // Audio after a flush starts a new talkspurt.
    sender.enqueue('u2', audio(40), 0, 40);
    expect(sent.at(-2)?.first).toBe(true);
  });

  it('holds at most maxQueuedFrames and counts what it refused', () => {
    const { sender } = setup({ maxQueuedFrames: 10 });
    sender.enqueue('u1', audio(1000), 0, 1000);
    expect(sender.queuedMs).toBeLessThanOrEqual(10 * 20);
    expect(sender.stats.framesSent + sender.stats.framesDropped + sender.queuedMs / 20).toBe(50);
  });
});
