import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { CheckpointTokenizer, TokenStreamDecoder } from './token-decoder.ts';
import { VENUS_PROTOCOL_TOKENS } from './wire-schemas.ts';

const TOKENIZER = fileURLToPath(new URL('../../../../test/fixtures/tokenizer/tokenizer.json', import.meta.url));

describe('TokenStreamDecoder', () => {
  let tk: CheckpointTokenizer;
  let special: Record<string, number>;
  const id = (token: string) => special[token] as number;

  beforeAll(async () => {
    tk = await CheckpointTokenizer.load(TOKENIZER);
    special = Object.fromEntries(VENUS_PROTOCOL_TOKENS.map((t) => [t, tk.idOf(t) as number]));
  });

  it('yields the same text however the delta stream is split, multi-byte characters included', () => {
    const text = 'It is 18°C 👋 in Paris, naïve café.';
    const ids = tk.encode(text);
    for (let a = 0; a <= ids.length; a++)
      for (let b = a; b <= ids.length; b += 3) {
        const d = new TokenStreamDecoder(tk, special);
        const pieces = [d.push(ids.slice(0, a)).text, d.push(ids.slice(a, b)).text, d.push(ids.slice(b)).text];
        expect(pieces.join('') + d.flush()).toBe(text);
        expect(pieces.some((p) => p.includes('\uFFFD'))).toBe(false);
      }
  });

  it('reads decisions and keeps only the delegate tags as text', () => {
    const d = new TokenStreamDecoder(tk, special);
    const first = d.push([id('<|speak|>'), ...tk.encode('Let me check.'), id('<|chunk_eos|>'), id('<delegate>')]);
    expect(first).toEqual({ text: 'Let me check.<delegate>', speak: true, listen: false, turnEos: false });
    const second = d.push([
      ...tk.encode('weather'),
      id('</delegate>'),
      id('<backend>'),
      id('</backend>'),
      id('<unit>'),
    ]);
    expect(second.text).toBe('weather</delegate>');
    expect(d.push([id('<|listen|>')])).toEqual({ text: '', speak: false, listen: true, turnEos: false });
  });

  it('closes an open delegate span at turn_eos and drops a stray close', () => {
    const d = new TokenStreamDecoder(tk, special);
    d.push([id('<delegate>'), ...tk.encode('weather in Paris')]);
    const end = d.push([id('<|turn_eos|>')]);
    expect(end).toMatchObject({ text: '</delegate>', turnEos: true });
    expect(d.push([id('</delegate>'), ...tk.encode('ok')]).text).toBe('ok');
  });

  it('skips ids the checkpoint does not know', () => {
    const d = new TokenStreamDecoder(tk, special);
    expect(d.push([999_999, ...tk.encode('hi')]).text).toBe('hi');
  });
});
