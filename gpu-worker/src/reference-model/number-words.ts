/**
 * Spoken numbers as digits, so a recognised "what is fifteen times four" reads as "what is 15 times 4"
 * to the calculation rules and the calculator. Written here rather than taken from npm: the packages
 * for it are either unmaintained or far larger than the ~50 lines English cardinals need, and the
 * recogniser only ever produces the lower-case words of its grammar.
 *
 * @example
 *   numberWordsToDigits('how much is one hundred and five divided by eight'); // 'how much is 105 divided by 8'
 *   numberWordsToDigits('two point five times a thousand'); // '2.5 times 1000'
 */

const UNITS: Record<string, number> = {
  zero: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
};
const TEENS: Record<string, number> = {
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
};
const TENS: Record<string, number> = {
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
};
const SCALES: Record<string, number> = { thousand: 1_000, million: 1_000_000 };

const WORD = `(?:${[...Object.keys(UNITS), ...Object.keys(TEENS), ...Object.keys(TENS), 'hundred', ...Object.keys(SCALES), 'point'].join('|')})`;
/**
 * A run of number words: joined by spaces or hyphens ("twenty-one"), "and" only after a hundred or
 * thousand ("one hundred and five"), "a" only before one ("a hundred").
 */
const RUN = new RegExp(
  String.raw`\b(?:a\s+(?=(?:hundred|thousand|million)\b))?${WORD}(?:(?:(?<=\b(?:hundred|thousand|million))\s+and\s+|[\s-]+)${WORD})*\b`,
  'gi',
);

/** The value of number words ("one hundred and five" -> 105), or null when they are not one number. */
export function parseNumberWords(words: string): number | null {
  const tokens = words
    .toLowerCase()
    .split(/[\s-]+/)
    .filter((w) => w !== '' && w !== 'and');
  if (tokens.length === 0) return null;
  let total = 0;
  let group = 0; // the part below the last thousand/million
  let last: 'none' | 'unit' | 'teen' | 'tens' | 'hundred' | 'scale' = 'none';
  let lastScale = Number.POSITIVE_INFINITY;
  let seen = false;
  for (let i = 0; i < tokens.length; i++) {
    const w = tokens[i]!;
    if (w === 'a' && i === 0) {
      group = 1;
      last = 'unit';
      continue;
    }
    if (w === 'point') {
      const decimals = tokens.slice(i + 1);
      if (decimals.length === 0 || decimals.some((d) => !(d in UNITS))) return null;
      return total + group + Number(`0.${decimals.map((d) => UNITS[d]).join('')}`);
    }
    if (w in UNITS) {
      if (!['none', 'tens', 'hundred', 'scale'].includes(last) || (w === 'zero' && seen)) return null;
      group += UNITS[w]!;
      last = 'unit';
    } else if (w in TEENS || w in TENS) {
      if (!['none', 'hundred', 'scale'].includes(last)) return null;
      group += TEENS[w] ?? TENS[w]!;
      last = w in TEENS ? 'teen' : 'tens';
    } else if (w === 'hundred') {
      if (group < 1 || group > 99 || !['unit', 'teen', 'tens'].includes(last)) return null;
      group *= 100;
      last = 'hundred';
    } else if (w in SCALES) {
      const scale = SCALES[w]!;
      if (group < 1 || scale >= lastScale) return null;
      total += group * scale;
      group = 0;
      lastScale = scale;
      last = 'scale';
    } else return null;
    seen = true;
  }
  return seen ? total + group : null;
}

/** The text with every run of number words that makes one number replaced by its digits. */
export function numberWordsToDigits(text: string): string {
  return text.replace(RUN, (run) => {
    const value = parseNumberWords(run);
    return value === null ? run : String(value);
  });
}
