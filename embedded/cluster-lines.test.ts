import { describe, expect, it } from 'vitest';
import { PrefixedLines } from './cluster-lines.ts';

describe('PrefixedLines', () => {
  it('prefixes every line, joining lines split across chunks', () => {
    const out: string[] = [];
    const lines = new PrefixedLines('edge-1', (line) => out.push(line));
    lines.push('edge ready: ws://x\nfirst ha');
    lines.push('lf\r\nsecond\n');
    lines.push('last, unfinished');
    expect(out).toEqual(['[edge-1] edge ready: ws://x', '[edge-1] first half', '[edge-1] second']);
    lines.end();
    expect(out.at(-1)).toBe('[edge-1] last, unfinished');
  });

  it('holds at most maxLineChars of a line without a newline', () => {
    const out: string[] = [];
    const lines = new PrefixedLines('w', (line) => out.push(line), 4);
    lines.push('abcdefghij');
    expect(out).toEqual(['[w] abcd', '[w] efgh']);
    lines.push('\n');
    expect(out.at(-1)).toBe('[w] ij');
  });

  it('passes an empty line through and leaves nothing after end', () => {
    const out: string[] = [];
    const lines = new PrefixedLines('h', (line) => out.push(line));
    lines.push('\n');
    lines.end();
    expect(out).toEqual(['[h] ']);
  });
});
