import type { RecogniserGrammar } from '@venus/protocol';
import { DEMO_GRAMMAR } from './demo-vocabulary.ts';

/** A registered function as far as the recogniser cares: what users say to reach it. */
export interface SpokenFunction {
  readonly examples?: readonly string[];
  readonly keywords?: readonly string[];
}

/**
 * The demo grammar extended with registered functions' examples and keywords, so a deployed
 * function extends what can be said. Examples are taken as whole phrases.
 *
 * @example
 *   grammarWithFunctions([{ examples: ['Remind me to call Anna'], keywords: ['reminder'] }]);
 */
export function grammarWithFunctions(
  functions: readonly SpokenFunction[],
  base: RecogniserGrammar = DEMO_GRAMMAR,
): RecogniserGrammar {
  const extra = functions.flatMap((f) => [...(f.examples ?? []), ...(f.keywords ?? [])]);
  return { phrases: [...base.phrases, ...extra], slots: base.slots };
}

/** Lower case, punctuation dropped except inside words ("what's", "mm-hm"); digits stay (and find no pronunciation). */
export function wordsOf(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[’‘]/g, "'")
    .split(/[^a-z0-9'<>-]+/)
    .map((w) => w.replace(/^['-]+|['-]+$/g, ''))
    .filter((w) => w !== '');
}

export interface CompiledGrammar {
  readonly jsgf: string;
  /** The words the grammar uses (all with pronunciations). */
  readonly words: readonly string[];
  readonly unknownWords: readonly string[];
}

const SLOT = /^<([a-z][a-z0-9_]*)>$/;

/**
 * JSGF for PocketSphinx: any sequence of the phrases, slots as rules. A phrase (or slot entry) with a
 * word `pronounceable` rejects is dropped, and the word reported.
 */
export function compileGrammar(grammar: RecogniserGrammar, pronounceable: (word: string) => boolean): CompiledGrammar {
  const unknown = new Set<string>();
  const used = new Set<string>();
  const keep = (words: string[]) => {
    const missing = words.filter((w) => !SLOT.test(w) && !pronounceable(w));
    for (const w of missing) unknown.add(w);
    return missing.length === 0;
  };
  const slotRules: string[] = [];
  const slotNames = new Set<string>();
  for (const [name, entries] of Object.entries(grammar.slots ?? {})) {
    if (!/^[a-z][a-z0-9_]*$/.test(name))
      throw new Error(`grammar slot name ${JSON.stringify(name)} is not [a-z][a-z0-9_]*`);
    const alternatives = unique(
      entries.map(wordsOf).filter((ws) => ws.length > 0 && !ws.some((w) => SLOT.test(w)) && keep(ws)),
    );
    if (alternatives.length === 0) continue;
    for (const ws of alternatives) for (const w of ws) used.add(w);
    slotNames.add(name);
    slotRules.push(`<slot_${name}> = ${alternatives.map((ws) => ws.join(' ')).join(' | ')};`);
  }
  const phrases = unique(
    grammar.phrases
      .map(wordsOf)
      .filter((ws) => ws.length > 0 && keep(ws) && ws.every((w) => !SLOT.test(w) || slotNames.has(SLOT.exec(w)![1]!))),
  );
  if (phrases.length === 0) throw new Error('grammar has no phrase the recogniser can pronounce');
  for (const ws of phrases) for (const w of ws) if (!SLOT.test(w)) used.add(w);
  const phraseRule = phrases
    .map((ws) => ws.map((w) => (SLOT.test(w) ? `<slot_${SLOT.exec(w)![1]}>` : w)).join(' '))
    .join(' | ');
  const jsgf = [
    '#JSGF V1.0;',
    'grammar venus;',
    ...slotRules,
    `<phrase> = ${phraseRule};`,
    'public <utterance> = <phrase>+;',
    '',
  ].join('\n');
  return { jsgf, words: [...used].sort(), unknownWords: [...unknown].sort() };
}

function unique(list: string[][]): string[][] {
  const seen = new Set<string>();
  return list.filter((ws) => {
    const key = ws.join(' ');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
