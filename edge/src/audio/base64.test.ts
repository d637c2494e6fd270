import { describe, expect, it } from 'vitest';
import { decodeBase64Strict, decodedLength, encodeBase64, isStrictBase64 } from './base64.ts';

/** The rule as first written (anchored pattern plus length rules): the fast check must agree with it. */
function referenceStrict(text: string): boolean {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return false;
  const remainder = text.length % 4;
  if (remainder === 1) return false;
  return !(text.includes('=') && remainder !== 0);
}

describe('strict base64', () => {
  it('agrees with the anchored-pattern rule on random strings near the alphabet', () => {
    const chars = 'AZaz09+/=-_ \n\u00e9';
    let seed = 7;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed;
    };
    for (let n = 0; n < 20_000; n++) {
      const length = next() % 9;
      let text = '';
      for (let i = 0; i < length; i++) text += chars[next() % chars.length];
      expect(isStrictBase64(text), JSON.stringify(text)).toBe(referenceStrict(text));
    }
  });

  it('accepts padded and unpadded base64 and refuses what Buffer would silently skip', () => {
    expect(isStrictBase64('')).toBe(true);
    expect(isStrictBase64('QUJD')).toBe(true);
    expect(isStrictBase64('QUI=')).toBe(true);
    expect(isStrictBase64('QQ==')).toBe(true);
    expect(isStrictBase64('QQ')).toBe(true);
    for (const bad of ['Q', 'QQ=', 'Q===', 'QQ=A', 'Q-I_', 'QU JD', 'QUJD\n', '=QUJ', 'QUJD====']) {
      expect(isStrictBase64(bad), bad).toBe(false);
      expect(decodeBase64Strict(bad), bad).toBeUndefined();
    }
  });

  it('decodes to the bytes encoded, and sizes a string before decoding it', () => {
    const bytes = new Uint8Array([0, 1, 2, 250, 251, 252, 253]);
    const text = encodeBase64(bytes);
    expect([...(decodeBase64Strict(text) ?? [])]).toEqual([...bytes]);
    expect(decodedLength(text)).toBe(bytes.length);
    expect(decodedLength(text.replace(/=+$/, ''))).toBe(bytes.length);
  });
});
