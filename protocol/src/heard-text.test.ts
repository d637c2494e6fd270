import { describe, expect, it } from 'vitest';
import { heardText, SpokenTextAccount } from './heard-text.ts';

describe('heardText', () => {
  const seg = [
    { text: 'It is sunny in Paris.', durationMs: 2000 },
    { text: 'Highs of twenty degrees.', durationMs: 2000 },
  ];
  it('counts whole segments played to their end, then whole words of the next', () => {
    expect(heardText(seg, 0)).toBe('');
    expect(heardText(seg, 2000)).toBe('It is sunny in Paris.');
    expect(heardText(seg, 3000)).toBe('It is sunny in Paris. Highs of');
    expect(heardText(seg, 9000)).toBe('It is sunny in Paris. Highs of twenty degrees.');
  });
  it('never counts a word whose audio has not ended', () => {
    expect(heardText([{ text: 'Hello', durationMs: 1000 }], 999)).toBe('');
    expect(heardText([{ text: 'ab cd', durationMs: 500 }], 200)).toBe('ab');
  });
  it('text with no known speech is not heard', () => {
    expect(heardText([], 5000)).toBe('');
  });
});

describe('SpokenTextAccount', () => {
  it('uses reported segments when the model gives them', () => {
    const a = new SpokenTextAccount();
    a.addText('One two. Three four.');
    a.addAudio(2000);
    a.addSegments([
      { text: 'One two.', durationMs: 500 },
      { text: 'Three four.', durationMs: 1500 },
    ]);
    expect(a.heardText(600, false, 62)).toBe('One two.');
  });
  it('estimates one even segment otherwise, by characters before the end is known', () => {
    const a = new SpokenTextAccount();
    a.addText('aaaa bbbb');
    a.addAudio(100);
    expect(a.heardText(100, false, 62)).toBe('');
    expect(a.heardText(100, true, 62)).toBe('aaaa bbbb');
    expect(a.heardText(60, true, 62)).toBe('aaaa');
  });
});
