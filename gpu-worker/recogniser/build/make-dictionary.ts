/**
 * Cuts the pronunciation dictionary the recogniser ships (gpu-worker/models/pocketsphinx/demo.dict)
 * from cmudict, for the demo grammar's words plus any words given on the command line, so the
 * decoder loads a few hundred entries instead of 135,000.
 *
 *   node --import tsx gpu-worker/recogniser/build/make-dictionary.ts [cmudict-en-us.dict] [extra words...]
 *
 * cmudict comes from Debian's pocketsphinx-en-us (/usr/share/pocketsphinx/model/en-us/). Output is
 * sorted and deterministic.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { DEMO_GRAMMAR } from '../../src/perception/pocketsphinx/demo-vocabulary.ts';
import { compileGrammar } from '../../src/perception/pocketsphinx/grammar-from-vocabulary.ts';

const [source = '/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict', ...extraWords] = process.argv.slice(2);
const out = new URL('../../models/pocketsphinx/demo.dict', import.meta.url);

/** Backchannels cmudict lacks, spelt with its phones (a closed-mouth "m", an "h", another "m"). */
const EXTRA: Record<string, readonly string[]> = {
  'mm-hm': ['M HH M', 'AH M HH AH M'],
};

const entries = new Map<string, string[]>();
for (const line of readFileSync(source, 'utf8').split('\n')) {
  const m = /^(\S+?)(?:\(\d+\))?\s+(.+)$/.exec(line.trim());
  if (!m) continue;
  const list = entries.get(m[1]!) ?? [];
  list.push(m[2]!.replace(/\s+#.*$/, '').trim());
  entries.set(m[1]!, list);
}
for (const [word, prons] of Object.entries(EXTRA)) entries.set(word, [...prons]);

const { words, unknownWords } = compileGrammar(DEMO_GRAMMAR, (w) => entries.has(w));
if (unknownWords.length > 0) throw new Error(`no pronunciation for demo words: ${unknownWords.join(', ')}`);
const wanted = [...new Set([...words, ...extraWords.map((w) => w.toLowerCase())])].sort();
const lines: string[] = [];
for (const word of wanted) {
  const prons = entries.get(word);
  if (!prons) throw new Error(`no pronunciation for ${word}`);
  for (const [i, p] of prons.entries()) lines.push(i === 0 ? `${word} ${p}` : `${word}(${i + 1}) ${p}`);
}
writeFileSync(out, `${lines.join('\n')}\n`);
console.log(`${wanted.length} words, ${lines.length} pronunciations -> ${out.pathname.split('/').slice(-3).join('/')}`);
