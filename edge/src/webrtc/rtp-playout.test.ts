import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Clock } from '../realtime/clock.ts';
import { EventsChannel } from './events-channel.ts';
import { InboundOpusAudio, seqDelta } from './inbound-opus-audio.ts';
import { OpusCodec } from './opus-codec.ts';
import { RtpPlayout } from './rtp-playout.ts';

const fakeClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

describe('RtpPlayout', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('counts a frame as heard the playout delay after it was sent, reporting every interval and in full at the end', () => {
    const acks: [string, number][] = [];
    const playout = new RtpPlayout({ clock: fakeClock, onAck: (id, ms) => acks.push([id, ms]) });
    // 600 ms of audio sent in real time, one frame every 20 ms.
    for (let i = 0; i < 30; i++) {
      playout.frameSent('utt_1', 20);
      vi.advanceTimersByTime(20);
    }
    // At 250 ms: frames sent up to 170 ms ago are heard (9 frames); at 500 ms, 22 frames.
    expect(acks.slice(0, 2)).toEqual([
      ['utt_1', 180],
      ['utt_1', 440],
    ]);
    expect(playout.isPlaying()).toBe(true);
    vi.advanceTimersByTime(500);
    expect(acks.at(-1)).toEqual(['utt_1', 600]);
    expect(playout.isPlaying()).toBe(false);
    const before = acks.length;
    vi.advanceTimersByTime(2000);
    expect(acks).toHaveLength(before);
  });

  it('never counts what was not sent, and stays monotonic when an item resumes', () => {
    const acks: [string, number][] = [];
    const playout = new RtpPlayout({ clock: fakeClock, onAck: (id, ms) => acks.push([id, ms]) });
    playout.frameSent('utt_1', 20);
    vi.advanceTimersByTime(1000);
    playout.frameSent('utt_1', 20);
    vi.advanceTimersByTime(1000);
    expect(acks).toEqual([
      ['utt_1', 20],
      ['utt_1', 40],
    ]);
  });
});

describe('InboundOpusAudio', () => {
  it('decodes in order, drops late and duplicate packets, and fills lost ones with silence', () => {
    const codec = new OpusCodec();
    const sender = new OpusCodec();
    const frames = Array.from({ length: 6 }, () => sender.encode(new Int16Array(480).fill(3000)));
    const out: Int16Array[] = [];
    const inbound = new InboundOpusAudio({ codec, onAudio: (pcm) => out.push(pcm), batchMs: 20 });
    const push = (i: number) =>
      inbound.push({ sequenceNumber: 65534 + i, timestamp: 4_294_966_000 + i * 960, payload: frames[i]! });
    push(0);
    push(1); // the sequence number wraps here
    push(3); // 2 is lost
    push(2); // ... and arrives late
    push(3); // duplicate
    push(4);
    inbound.flush();
    const total = out.reduce((n, pcm) => n + pcm.length, 0);
    expect(total).toBe(5 * 480);
    expect(inbound.stats).toEqual({ packets: 6, dropped: 2, concealedMs: 20 });
    codec.close();
    sender.close();
  });

  it('orders 16-bit sequence numbers across the wrap', () => {
    expect(seqDelta(0, 65535)).toBe(1);
    expect(seqDelta(65535, 0)).toBe(-1);
    expect(seqDelta(100, 100)).toBe(0);
  });
});

describe('EventsChannel', () => {
  it('holds events until the channel opens, then delivers them in order', () => {
    const sent: string[] = [];
    const channel = {
      readyState: 'connecting' as 'connecting' | 'open',
      bufferedAmount: 0,
      send: (t: string) => sent.push(t),
    };
    const events = new EventsChannel({ maxPending: 2 });
    events.send('a');
    events.attach(channel);
    events.send('b');
    events.send('c');
    expect(sent).toEqual([]);
    expect(events.dropped).toBe(1);
    channel.readyState = 'open';
    events.attach(channel);
    events.send('d');
    expect(sent).toEqual(['b', 'c', 'd']);
  });
});
