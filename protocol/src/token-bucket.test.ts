import { describe, expect, it } from 'vitest';
import { TokenBucket } from './token-bucket.ts';

describe('TokenBucket', () => {
  it('allows a burst, refuses the next with the wait until a token is back, and refills at the rate', () => {
    let now = 0;
    const bucket = new TokenBucket({ perMinute: 60, burst: 3 }, () => now);
    expect([bucket.take(), bucket.take(), bucket.take()].every((taken) => taken.ok)).toBe(true);
    expect(bucket.take()).toEqual({ ok: false, retryAfterMs: 1000 });
    now = 500;
    expect(bucket.take()).toEqual({ ok: false, retryAfterMs: 500 });
    now = 1000;
    expect(bucket.take().ok).toBe(true);
    now = 100_000;
    expect(bucket.peek(3)).toBe(true);
    expect(bucket.peek(4)).toBe(false);
  });

  it('takes fractional amounts (seconds of audio) and never waits forever on a zero rate by mistake', () => {
    let now = 0;
    const audio = new TokenBucket({ perMinute: 60, burst: 1 }, () => now);
    expect(audio.take(0.6).ok).toBe(true);
    expect(audio.take(0.6)).toEqual({ ok: false, retryAfterMs: 200 });
    now = 200;
    expect(audio.take(0.6).ok).toBe(true);
    const closed = new TokenBucket({ perMinute: 0, burst: 1 }, () => now);
    expect(closed.take().ok).toBe(true);
    expect(closed.take()).toEqual({ ok: false, retryAfterMs: Number.POSITIVE_INFINITY });
  });
});
