import { describe, expect, it } from 'vitest';
import { SentenceSplitter } from './sentence-splitter.ts';

describe('SentenceSplitter', () => {
  it('cuts at sentence ends as text streams in, holding very short sentences for the next', () => {
    const s = new SentenceSplitter();
    expect(s.push('Sure. It is 18 degr')).toEqual([]);
    expect(s.push('ees in Paris! Anything')).toEqual(['Sure. It is 18 degrees in Paris!']);
    expect(s.push(' else?')).toEqual([]);
    expect(s.flush()).toEqual(['Anything else?']);
  });

  it('cuts a long sentence without an end at a comma, and drops text with nothing to say', () => {
    const s = new SentenceSplitter();
    const long = `${'word '.repeat(30)}and then, ${'more '.repeat(20)}`;
    const [first] = s.push(long);
    expect(first?.endsWith('and then,')).toBe(true);
    expect(s.flush()[0]?.startsWith('more')).toBe(true);
    expect(new SentenceSplitter().push(' ... ')).toEqual([]);
  });
});
