import { describe, expect, it } from 'vitest';
import { StreamingResampler } from './streaming-resampler.ts';

function sine(hz: number, rate: number, samples: number, amplitude = 10_000): Int16Array {
  return Int16Array.from({ length: samples }, (_, i) =>
    Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate)),
  );
}

function rms(pcm: Int16Array, skip: number): number {
  let sum = 0;
  for (let i = skip; i < pcm.length; i++) sum += pcm[i]! ** 2;
  return Math.sqrt(sum / (pcm.length - skip));
}

describe('StreamingResampler', () => {
  it.each([
    [24_000, 16_000, 480, 320],
    [8_000, 16_000, 160, 320],
    [24_000, 8_000, 480, 160],
  ])('%i Hz -> %i Hz turns %i samples into %i', (from, to, n, expected) => {
    expect(new StreamingResampler(from, to).process(new Int16Array(n)).length).toBe(expected);
  });

  it('gives the same samples whether the stream comes whole or in odd pieces', () => {
    const input = sine(440, 24_000, 2400);
    const whole = new StreamingResampler(24_000, 16_000).process(input);
    const pieced = new StreamingResampler(24_000, 16_000);
    const parts: Int16Array[] = [];
    let at = 0;
    for (const size of [1, 7, 100, 373, 919, 1000]) {
      parts.push(pieced.process(input.subarray(at, at + size)));
      at += size;
    }
    const joined = Int16Array.from(parts.flatMap((part) => [...part]));
    expect(joined.length).toBe(1600);
    expect([...joined]).toEqual([...whole]);
  });

  it('passes an in-band tone at its level', () => {
    const out = new StreamingResampler(24_000, 16_000).process(sine(1000, 24_000, 4800));
    expect(rms(out, 200) / (10_000 / Math.SQRT2)).toBeGreaterThan(0.95);
    expect(rms(out, 200) / (10_000 / Math.SQRT2)).toBeLessThan(1.05);
  });

  it('removes a tone above the output Nyquist instead of folding it into the band', () => {
    // Plain decimation would alias 10 kHz at 24 kHz down to 6 kHz at 16 kHz at full level.
    const out = new StreamingResampler(24_000, 16_000).process(sine(10_000, 24_000, 4800));
    expect(rms(out, 200)).toBeLessThan(0.02 * (10_000 / Math.SQRT2));
  });

  it('keeps a constant level constant', () => {
    const out = new StreamingResampler(8_000, 16_000).process(new Int16Array(800).fill(1000));
    for (const sample of out.subarray(100)) expect(Math.abs(sample - 1000)).toBeLessThanOrEqual(1);
  });
});
