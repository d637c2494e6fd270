import { describe, expect, it } from 'vitest';
import { numberWordsToDigits, parseNumberWords } from './number-words.ts';

describe('number words', () => {
  it.each([
    ['zero', 0],
    ['seven', 7],
    ['fifteen', 15],
    ['forty', 40],
    ['twenty one', 21],
    ['ninety-nine', 99],
    ['one hundred', 100],
    ['a hundred', 100],
    ['one hundred and five', 105],
    ['three hundred forty two', 342],
    ['fifteen hundred', 1500],
    ['a thousand', 1000],
    ['two thousand and twelve', 2012],
    ['twelve thousand three hundred', 12300],
    ['one million two hundred thousand', 1_200_000],
    ['two point five', 2.5],
    ['point seven five', 0.75],
  ])('reads %s as %d', (words, value) => {
    expect(parseNumberWords(words)).toBe(value);
  });

  it.each([
    ['seven eight'],
    ['twelve seven'],
    ['twenty twenty'],
    ['hundred'],
    ['one point'],
    ['thousand thousand'],
    ['two zero'],
  ])('refuses %s (not one number)', (words) => {
    expect(parseNumberWords(words)).toBeNull();
  });

  it('replaces number words in a sentence and leaves the rest', () => {
    expect(numberWordsToDigits('What is fifteen times four?')).toBe('What is 15 times 4?');
    expect(numberWordsToDigits('how much is one hundred divided by eight')).toBe('how much is 100 divided by 8');
    expect(numberWordsToDigits('what is twenty percent of fifty')).toBe('what is 20 percent of 50');
    expect(numberWordsToDigits('Twenty-One plus a hundred and one')).toBe('21 plus 101');
    expect(numberWordsToDigits('seven eight nine')).toBe('seven eight nine');
    expect(numberWordsToDigits('often someone is a tenant and alone')).toBe('often someone is a tenant and alone');
    expect(numberWordsToDigits('one and two')).toBe('1 and 2');
  });
});
