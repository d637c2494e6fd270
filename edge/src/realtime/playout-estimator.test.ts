import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Clock } from './clock.ts';
import { PlayoutEstimator } from './playout-estimator.ts';

/** Fake timers drive both the clock and the timers, so playout is deterministic. */
const fakeClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

function estimator() {
  const acks: [string, number][] = [];
  const played: string[] = [];
  const e = new PlayoutEstimator({
    clock: fakeClock,
    onAck: (id, ms) => acks.push([id, ms]),
    onPlayed: (id) => played.push(id),
  });
  return { e, acks, played };
}

describe('PlayoutEstimator', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reports progress every 250 ms while audio is outstanding and a final ack at the end', () => {
    const { e, acks, played } = estimator();
    e.audioSent('u1', 1000);
    vi.advanceTimersByTime(250);
    expect(acks).toEqual([['u1', 250]]);
    vi.advanceTimersByTime(250);
    e.finished('u1');
    expect(played).toEqual([]);
    vi.advanceTimersByTime(600);
    expect(acks).toEqual([
      ['u1', 250],
      ['u1', 500],
      ['u1', 750],
      ['u1', 1000],
    ]);
    expect(played).toEqual(['u1']);
    expect(e.isPlaying()).toBe(false);
    vi.advanceTimersByTime(2000);
    expect(acks).toHaveLength(4);
  });

  it('never runs ahead of the audio sent: an underrun stalls playback until more arrives', () => {
    const { e, acks, played } = estimator();
    e.audioSent('u1', 200);
    vi.advanceTimersByTime(500);
    expect(acks).toEqual([['u1', 200]]);
    expect(e.isPlaying()).toBe(true); // not finished: more audio may come
    e.audioSent('u1', 200); // resumes from now, not from the start of the stall
    vi.advanceTimersByTime(150);
    expect(e.playedMs('u1')).toBe(350);
    e.finished('u1');
    vi.advanceTimersByTime(50);
    expect(acks[acks.length - 1]).toEqual(['u1', 400]);
    expect(played).toEqual(['u1']);
  });

  it('starts the next utterance when the previous one has played out', () => {
    const { e, played } = estimator();
    e.audioSent('u1', 300);
    e.finished('u1');
    e.audioSent('u2', 300);
    vi.advanceTimersByTime(299);
    expect(e.playedMs('u2')).toBe(0);
    vi.advanceTimersByTime(1);
    expect(played).toEqual(['u1']);
    vi.advanceTimersByTime(100);
    expect(e.playedMs('u2')).toBe(100);
    e.finished('u2');
    vi.advanceTimersByTime(200);
    expect(played).toEqual(['u1', 'u2']);
  });

  it('stops estimating an utterance the client truncated, and plays the next from then', () => {
    const { e, acks, played } = estimator();
    e.audioSent('u1', 1000);
    e.finished('u1');
    e.audioSent('u2', 400);
    vi.advanceTimersByTime(300);
    e.truncate('u1');
    const acksAtTruncate = acks.length;
    vi.advanceTimersByTime(100);
    expect(e.playedMs('u2')).toBe(100);
    expect(acks.slice(acksAtTruncate).every(([id]) => id === 'u2')).toBe(true);
    e.finished('u2');
    vi.advanceTimersByTime(1000);
    expect(played).toEqual(['u2']);
  });

  it('clear reports where playback stopped and then goes quiet', () => {
    const { e, acks, played } = estimator();
    e.audioSent('u1', 1000);
    vi.advanceTimersByTime(120);
    expect(e.clear()).toEqual(['u1']);
    expect(acks).toEqual([['u1', 120]]);
    vi.advanceTimersByTime(2000);
    expect(acks).toHaveLength(1);
    expect(played).toEqual([]);
    expect(e.isPlaying()).toBe(false);
  });

  it('does not bank idle time: audio sent after a silence starts playing when it is sent', () => {
    const { e } = estimator();
    vi.advanceTimersByTime(5000);
    e.audioSent('u1', 1000);
    vi.advanceTimersByTime(100);
    expect(e.playedMs('u1')).toBe(100);
  });
});

describe('regression: playout acks starved by frequent audio', () => {
  // What broke: every audioSent cancelled and re-armed the report timer, so audio arriving more
  // often than the 250 ms report interval (e.g. 160 ms chunks) meant no progress acks until the end.
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('keeps reporting every 250 ms while audio arrives every 100 ms ahead of playout', () => {
    const { e, acks } = estimator();
    e.audioSent('u1', 500); // the client holds half a second of audio in its buffer
    for (let i = 0; i < 10; i++) {
      e.audioSent('u1', 100);
      vi.advanceTimersByTime(100);
    }
    expect(acks.length).toBeGreaterThanOrEqual(3);
    const played = acks.map(([, ms]) => ms);
    expect(played).toEqual([...played].sort((a, b) => a - b));
    expect(played.at(-1)).toBeGreaterThanOrEqual(750);
  });
});
