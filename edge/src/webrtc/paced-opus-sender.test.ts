import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Clock } from '../realtime/clock.ts';
import { InboundOpusAudio } from './inbound-opus-audio.ts';
import { OpusCodec } from './opus-codec.ts';
import { type OutboundRtp, PacedOpusSender } from './paced-opus-sender.ts';

/** Fake timers drive both the clock and the timers; the Opus codec is the real one. */
const fakeClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

const tone = (ms: number, amplitude = 8000) =>
  Int16Array.from({ length: ms * 24 }, (_, i) => Math.round(amplitude * Math.sin((2 * Math.PI * 440 * i) / 24_000)));

function sender() {
  const codec = new OpusCodec();
  const packets: (OutboundRtp & { at: number })[] = [];
  const sent: [string, number][] = [];
  const done: string[] = [];
  const s = new PacedOpusSender({
    codec,
    clock: fakeClock,
    send: (p) => packets.push({ ...p, at: Date.now() }),
    onFrameSent: (id, ms) => sent.push([id, ms]),
    onItemSent: (id) => done.push(id),
  });
  return { s, codec, packets, sent, done };
}

describe('PacedOpusSender', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('sends 20 ms Opus frames in real time, 40 ms ahead, with contiguous sequence numbers and 48 kHz timestamps', () => {
    const { s, packets, sent, done } = sender();
    s.enqueue('item_1', tone(1000));
    s.finish('item_1');
    expect(packets).toHaveLength(3); // now, +20 and +40 ms go out at once (the lead)
    vi.advanceTimersByTime(500);
    expect(packets.length).toBeGreaterThanOrEqual(27);
    expect(packets.length).toBeLessThanOrEqual(28);
    vi.advanceTimersByTime(1000);
    expect(packets).toHaveLength(50);
    for (let i = 1; i < packets.length; i++) {
      expect((packets[i]!.sequenceNumber - packets[i - 1]!.sequenceNumber) & 0xffff).toBe(1);
      expect((packets[i]!.timestamp - packets[i - 1]!.timestamp) >>> 0).toBe(960);
      // Never more than the lead ahead of the frame's real-time position.
      expect(packets[i]!.at).toBeGreaterThanOrEqual(1000 + i * 20 - 40);
    }
    expect(packets.map((p) => p.marker)).toEqual([true, ...Array(49).fill(false)]);
    expect(sent.reduce((ms, [, m]) => ms + m, 0)).toBe(1000);
    expect(done).toEqual(['item_1']);
  });

  it('pads the last partial frame of a finished item, and marks the next talkspurt with the silence in its timestamp', () => {
    const { s, packets, done } = sender();
    s.enqueue('item_1', tone(50)); // two frames and a half
    vi.advanceTimersByTime(10);
    expect(packets).toHaveLength(2);
    s.finish('item_1');
    vi.advanceTimersByTime(100);
    expect(packets).toHaveLength(3);
    expect(done).toEqual(['item_1']);

    vi.advanceTimersByTime(1000); // a second of silence: nothing is sent
    expect(packets).toHaveLength(3);
    s.enqueue('item_2', tone(40));
    s.finish('item_2');
    vi.advanceTimersByTime(100);
    expect(packets).toHaveLength(5);
    expect(packets[3]!.marker).toBe(true);
    expect((packets[3]!.sequenceNumber - packets[2]!.sequenceNumber) & 0xffff).toBe(1);
    const gapTicks = (packets[3]!.timestamp - packets[2]!.timestamp) >>> 0;
    expect(gapTicks).toBeGreaterThanOrEqual(48 * 1000);
    expect(gapTicks % 960).toBe(0);
  });

  it('sends a partial frame padded after a short wait when no more audio comes', () => {
    const { s, packets } = sender();
    s.enqueue('item_1', tone(30));
    expect(packets).toHaveLength(1);
    vi.advanceTimersByTime(100);
    expect(packets).toHaveLength(2);
  });

  it('drops what it has not sent on flush (a barge-in), and reports the items cut short', () => {
    const { s, packets, done } = sender();
    s.enqueue('item_1', tone(2000));
    s.finish('item_1');
    vi.advanceTimersByTime(200);
    const before = packets.length;
    expect(s.flush()).toEqual(['item_1']);
    expect(s.queuedMs).toBe(0);
    vi.advanceTimersByTime(2000);
    expect(packets).toHaveLength(before);
    expect(done).toEqual([]);
    expect(s.stats.framesFlushed).toBe(100 - before);
  });

  it('rebases its schedule after a stalled event loop instead of bursting the backlog', () => {
    const { s, packets } = sender();
    s.enqueue('item_1', tone(1000));
    vi.setSystemTime(Date.now() + 300); // the loop was blocked: no timer ran
    vi.advanceTimersByTime(25);
    // 3 frames at the start, then 3 from the rebased schedule, not the 15 owed.
    expect(packets.length).toBeLessThanOrEqual(7);
    expect(s.stats.rebases).toBe(1);
  });

  it('produces audio a decoder hears as the tone it was given', () => {
    const { s, packets, codec } = sender();
    s.enqueue('item_1', tone(400));
    s.finish('item_1');
    vi.advanceTimersByTime(500);
    const decoded: Int16Array[] = [];
    const receiver = new OpusCodec();
    const inbound = new InboundOpusAudio({ codec: receiver, onAudio: (pcm) => decoded.push(pcm) });
    for (const p of packets) inbound.push(p);
    inbound.flush();
    const pcm = Int16Array.from(decoded.flatMap((d) => [...d]));
    expect(pcm.length).toBe(400 * 24);
    const rms = Math.sqrt(pcm.slice(2400).reduce((sum, x) => sum + x * x, 0) / (pcm.length - 2400));
    expect(rms).toBeGreaterThan(4000);
    expect(rms).toBeLessThan(7000);
    codec.close();
    receiver.close();
  });
});
