import { describe, expect, it } from 'vitest';
import { DEMO_GRAMMAR } from './demo-vocabulary.ts';
import { compileGrammar, grammarWithFunctions, wordsOf } from './grammar-from-vocabulary.ts';
import { MODEL_DIR } from './pocketsphinx-wasm.ts';
import { Pronunciations } from './pronunciations.ts';
import { REJECT_SCORE_PER_FRAME, scoreToConfidence } from './recogniser-protocol.ts';

const pronunciations = Pronunciations.load(MODEL_DIR);

describe('grammar generation', () => {
  it("extends the demo grammar with a function's examples and keywords, as whole phrases", () => {
    const g = grammarWithFunctions([{ examples: ['Remind me to call Anna'], keywords: ['reminder'] }]);
    expect(g.phrases.slice(0, DEMO_GRAMMAR.phrases.length)).toEqual(DEMO_GRAMMAR.phrases);
    expect(g.phrases.slice(-2)).toEqual(['Remind me to call Anna', 'reminder']);
    expect(g.slots).toBe(DEMO_GRAMMAR.slots);
  });

  it('compiles to JSGF: any sequence of phrases, slots as rules, unpronounceable phrases dropped and reported', () => {
    const known = new Set(['what', 'time', 'in', 'paris', 'new', 'york', 'stop']);
    const c = compileGrammar(
      {
        phrases: ['what time in <city>', 'stop', 'stop zqx', 'in <nowhere>'],
        slots: { city: ['Paris', 'New York', 'Qqq'] },
      },
      (w) => known.has(w),
    );
    expect(c.jsgf).toContain('<slot_city> = paris | new york;');
    expect(c.jsgf).toContain('<phrase> = what time in <slot_city> | stop;');
    expect(c.jsgf).toContain('public <utterance> = <phrase>+;');
    expect(c.unknownWords).toEqual(['qqq', 'zqx']);
    expect(c.words).toEqual(['in', 'new', 'paris', 'stop', 'time', 'what', 'york']);
  });

  it('normalises words the way the dictionary spells them', () => {
    expect(wordsOf("What's the weather, in Sao Paulo? Mm-hm!")).toEqual([
      "what's",
      'the',
      'weather',
      'in',
      'sao',
      'paulo',
      'mm-hm',
    ]);
  });

  it('refuses a grammar with nothing pronounceable and a bad slot name', () => {
    expect(() => compileGrammar({ phrases: ['zqx'] }, () => false)).toThrow(/no phrase/);
    expect(() => compileGrammar({ phrases: ['a'], slots: { 'Bad-Name': ['x'] } }, () => true)).toThrow(/slot name/);
  });
});

describe('pronunciations', () => {
  it('pronounce every demo word and, through CMUdict, the words deployed functions bring', () => {
    const demo = compileGrammar(DEMO_GRAMMAR, (w) => pronunciations.has(w));
    expect(demo.unknownWords).toEqual([]);
    const fn = compileGrammar(grammarWithFunctions([{ examples: ['do I need an umbrella in Seattle'] }]), (w) =>
      pronunciations.has(w),
    );
    expect(fn.words).toEqual(expect.arrayContaining(['umbrella', 'need']));
  });

  it('let the demo grammar say calculations on two spoken numbers', () => {
    const demo = compileGrammar(DEMO_GRAMMAR, (w) => pronunciations.has(w));
    expect(demo.jsgf).toContain('<slot_operator> = plus | minus | times | multiplied by | divided by | percent of;');
    expect(demo.jsgf).toMatch(/<slot_number> = zero \| one \| .*\| twenty one \| .*\| a hundred \| .*\| one thousand;/);
    expect(demo.jsgf).toContain('what is <slot_number> <slot_operator> <slot_number>');
    expect(demo.words).toEqual(
      expect.arrayContaining(['fifteen', 'ninety', 'hundred', 'thousand', 'percent', 'divided']),
    );
  });

  it('cut a dictionary to the words asked for, with every variant, the demo entries winning', () => {
    const text = pronunciations.dictionaryFor(['umbrella', 'mm-hm', 'zqx']);
    const lines = text.trim().split('\n');
    expect(lines[0]).toMatch(/^umbrella /);
    expect(lines.some((l) => l.startsWith('mm-hm '))).toBe(true);
    expect(lines.every((l) => /^(umbrella|mm-hm)(\(\d+\))? [A-Z]/.test(l))).toBe(true);
  });
});

describe('rejection score', () => {
  it('maps the per-frame score to a confidence that crosses one half at the threshold', () => {
    expect(scoreToConfidence(REJECT_SCORE_PER_FRAME)).toBeCloseTo(0.5);
    expect(scoreToConfidence(-35)).toBeGreaterThan(0.99);
    expect(scoreToConfidence(-70)).toBeLessThan(0.05);
    expect(scoreToConfidence(-50)).toBeGreaterThan(scoreToConfidence(-55));
  });
});
