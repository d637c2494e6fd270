import { describe, expect, it } from 'vitest';
import { assembleFirKernel } from '../../scripts/build-fir-kernel.ts';
import { FirKernel } from './fir-kernel.ts';
import { FIR_KERNEL_WASM_BASE64 } from './fir-kernel-wasm.ts';
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

  it('runs the SIMD kernel on Node, and it matches the JavaScript loop to one LSB', () => {
    expect(FirKernel.load()).toBeDefined();
    for (const [from, to] of [
      [24_000, 16_000],
      [8_000, 16_000],
      [16_000, 24_000],
      [24_000, 8_000],
    ] as const) {
      const simd = new StreamingResampler(from, to);
      const js = new StreamingResampler(from, to, { simd: false });
      // Speech-like: two tones and a full-scale burst that has to clip.
      const input = Int16Array.from({ length: 9_000 }, (_, i) =>
        i > 6_000 && i < 6_400
          ? 32_767 * Math.sign(Math.sin(i / 3))
          : Math.round(9_000 * Math.sin(i / 7) + 4_000 * Math.sin(i / 2.3)),
      );
      let at = 0;
      for (const size of [480, 1, 333, 2_000, 6_186]) {
        const a = simd.process(input.subarray(at, at + size));
        const b = js.process(input.subarray(at, at + size));
        expect(a.length).toBe(b.length);
        let worst = 0;
        for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
        expect(worst, `${from} -> ${to}, piece of ${size}`).toBeLessThanOrEqual(1);
        at += size;
      }
    }
  });

  it('keeps separate streams apart while they share the kernel', () => {
    const a = new StreamingResampler(24_000, 16_000);
    const b = new StreamingResampler(24_000, 16_000);
    const alone = new StreamingResampler(24_000, 16_000).process(sine(440, 24_000, 960));
    a.process(sine(440, 24_000, 480));
    b.process(sine(3_000, 24_000, 480));
    const second = a.process(sine(440, 24_000, 960).subarray(480));
    expect([...second]).toEqual([...alone.subarray(320)]);
  });
});

describe('fir-kernel-wasm.ts', () => {
  it('is what fir-kernel.wat assembles to (run `npm run build:wasm` after editing the .wat)', async () => {
    const bytes = await assembleFirKernel();
    expect(Buffer.from(bytes).toString('base64')).toBe(FIR_KERNEL_WASM_BASE64);
  });
});
