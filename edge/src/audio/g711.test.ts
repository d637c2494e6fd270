import { describe, expect, it } from 'vitest';
import {
  alawToLinear,
  decodeAlaw,
  decodeMulaw,
  encodeAlaw,
  encodeMulaw,
  linearToAlaw,
  linearToMulaw,
  mulawToLinear,
} from './g711.ts';

describe('G.711', () => {
  it('encodes silence to the standard idle codes', () => {
    expect(linearToMulaw(0)).toBe(0xff);
    expect(linearToAlaw(0)).toBe(0xd5);
  });

  it('re-encodes every μ-law code to itself (0x7f is the second zero and maps to 0xff)', () => {
    for (let code = 0; code < 256; code++) {
      const expected = code === 0x7f ? 0xff : code;
      expect(linearToMulaw(mulawToLinear(code))).toBe(expected);
    }
  });

  it('re-encodes every A-law code to itself', () => {
    for (let code = 0; code < 256; code++) expect(linearToAlaw(alawToLinear(code))).toBe(code);
  });

  it('round-trips linear PCM within the companding step', () => {
    const samples = Int16Array.from({ length: 65536 / 7 }, (_, i) => -32768 + i * 7);
    for (const [encode, decode] of [
      [encodeMulaw, decodeMulaw],
      [encodeAlaw, decodeAlaw],
    ] as const) {
      const back = decode(encode(samples));
      const outOfBound = samples.filter((x, i) => Math.abs(back[i]! - x) > Math.max(16, Math.abs(x) / 16));
      expect([...outOfBound]).toEqual([]);
    }
  });

  it('keeps the sign and ordering of loud samples', () => {
    const pcm = new Int16Array([-30000, -1000, 1000, 30000]);
    for (const back of [decodeMulaw(encodeMulaw(pcm)), decodeAlaw(encodeAlaw(pcm))]) {
      expect([...back].map(Math.sign)).toEqual([-1, -1, 1, 1]);
      expect(back[0]!).toBeLessThan(back[1]!);
      expect(back[2]!).toBeLessThan(back[3]!);
    }
  });
});
