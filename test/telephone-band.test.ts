import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { toPcm16 } from '../eval/audio/signal.ts';
import { CEPSTRA } from '../gpu-worker/src/perception/pocketsphinx/pocketsphinx-wasm.ts';
import { BandMeter, TelephoneMap } from '../gpu-worker/src/perception/pocketsphinx/telephone-band.ts';
import { telephone } from '../training/mix.ts';

/**
 * Deterministic noise tilted like speech (-6 dB per octave above about 500 Hz, a one-pole low-pass
 * over a fixed linear congruential sequence), around -25 dBFS.
 */
function noise(samples: number): Float32Array {
  let state = 12345;
  let y = 0;
  return Float32Array.from({ length: samples }, () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    y = 0.82 * y + 0.18 * (state / 2147483648 - 0.5);
    return y * 0.6;
  });
}

describe('telephone band (recogniser front end)', () => {
  it('tells full-band audio from the same audio through the 8 kHz mu-law round trip', () => {
    const wide = noise(16_000);
    const wideMeter = new BandMeter();
    wideMeter.push(toPcm16(wide));
    expect(wideMeter.verdict).toBe('wide');
    const narrowMeter = new BandMeter();
    narrowMeter.push(toPcm16(telephone(wide).subarray(0, wide.length)));
    expect(narrowMeter.verdict).toBe('narrow');
    expect(narrowMeter.highBandDb).toBeLessThan(wideMeter.highBandDb - 20);
  });

  it('says nothing until 0.3 s of audio above the floor, and silence does not count', () => {
    const meter = new BandMeter();
    meter.push(new Int16Array(16_000 * 2));
    expect(meter.verdict).toBeNull();
    expect(meter.highBandDb).toBeNaN();
    meter.push(toPcm16(noise(16 * 200)));
    expect(meter.verdict).toBeNull();
    meter.push(toPcm16(noise(16 * 200)));
    expect(meter.verdict).toBe('wide');
  });

  it('loads the shipped map and maps each frame of 13 cepstra to 13', () => {
    const map = TelephoneMap.load();
    const frames = Float32Array.from({ length: 3 * CEPSTRA }, (_, i) => (i % CEPSTRA === 0 ? 50 : i % 7));
    const out = map.apply(frames);
    expect(out.length).toBe(frames.length);
    expect(out.every(Number.isFinite)).toBe(true);
    expect(Array.from(out)).not.toEqual(Array.from(frames));
  });

  it('refuses a map file of the wrong shape, naming what is wrong', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'venus-telephone-map-'));
    try {
      writeFileSync(path.join(dir, 'telephone-map.json'), JSON.stringify({ weights: [[1, 2, 3]] }));
      expect(() => TelephoneMap.load(pathToFileURL(`${dir}/`))).toThrow(/13 rows of 14 finite weights/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
