import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

/**
 * Pronunciations the recogniser can use: the demo dictionary (`demo.dict`, with the few words
 * written by hand such as "mm-hm") over the full CMUdict as Debian's `pocketsphinx-en-us` ships it
 * (`cmudict-en-us.dict.gz`, ~135,000 words, 0.86 MB compressed, ~3 MB of text in memory per
 * recogniser thread). A stream's decoder gets a dictionary cut to its grammar's words, so a
 * function's examples and keywords are heard whatever words they use, and a small grammar still
 * loads a small dictionary.
 *
 * @example
 *   const p = Pronunciations.load(MODEL_DIR);
 *   p.has('umbrella'); // true
 *   p.dictionaryFor(['umbrella', 'in']); // "umbrella AH M B R EH L AH\nin IH N\nin(2) IH0 N\n"
 */
export class Pronunciations {
  /** word -> its dictionary lines (all variants). */
  private readonly lines = new Map<string, string[]>();

  private constructor() {}

  static load(modelDir: URL): Pronunciations {
    const p = new Pronunciations();
    p.add(gunzipSync(readFileSync(new URL('cmudict-en-us.dict.gz', modelDir))).toString('utf8'));
    // The demo dictionary wins: its entries are the ones measured with the demo grammar.
    p.add(readFileSync(new URL('demo.dict', modelDir), 'utf8'), true);
    return p;
  }

  /** Parses dictionary text (`word PH ON ES`, variants as `word(2) ...`). */
  private add(text: string, replace = false): void {
    const fresh = new Set<string>();
    for (const line of text.split('\n')) {
      const trimmed = line.trim();
      if (trimmed === '') continue;
      const head = trimmed.slice(0, trimmed.indexOf(' '));
      const word = head.replace(/\(\d+\)$/, '');
      if (replace && !fresh.has(word)) {
        this.lines.set(word, []);
        fresh.add(word);
      }
      const list = this.lines.get(word);
      if (list) list.push(trimmed);
      else this.lines.set(word, [trimmed]);
    }
  }

  has(word: string): boolean {
    return this.lines.has(word);
  }

  /** The dictionary text for exactly these words (unknown ones are skipped). */
  dictionaryFor(words: Iterable<string>): string {
    let text = '';
    for (const w of words) for (const line of this.lines.get(w) ?? []) text += `${line}\n`;
    return text;
  }
}
