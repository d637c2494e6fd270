import { TEXT_SPECIAL_TOKENS } from '../../../reference-model/special-tokens.ts';

/**
 * The tiny bundle's tokenizer: a byte-level BPE in the Hugging Face `tokenizer.json` format (the
 * layout Qwen-family checkpoints ship), with merges learned on the tiny model's own phrases until
 * every word of them is one token, and the protocol tokens as special added tokens. Any other text
 * still encodes, byte by byte.
 */

export const TINY_SPECIAL_TOKENS = {
  ...TEXT_SPECIAL_TOKENS,
  user_open: '<|user|>',
  user_close: '<|end_user|>',
  /** Closes a silent prefill: context only, nothing to say. */
  quiet: '<|quiet|>',
} as const;

const SPLIT_PATTERN =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/** GPT-2's reversible byte -> printable character table, shared by every byte-level BPE. */
export function byteTable(): string[] {
  const printable = (b: number) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  const table: string[] = [];
  let extra = 0;
  for (let b = 0; b < 256; b++) table.push(String.fromCodePoint(printable(b) ? b : 256 + extra++));
  return table;
}

/** Splits text as the tokenizer's pre-tokenizer does; each piece as its byte symbols. */
export function pretokenizeSymbols(text: string, table = byteTable()): string[][] {
  const pattern = new RegExp(SPLIT_PATTERN.replace('(?i:', '(?:'), 'gu');
  return [...text.matchAll(pattern)].map((m) => [...Buffer.from(m[0], 'utf8')].map((b) => table[b]!));
}

/** Splits text as the tokenizer's pre-tokenizer does and maps each piece to byte symbols. */
export function pretokenize(text: string): string[] {
  return pretokenizeSymbols(text).map((symbols) => symbols.join(''));
}

/**
 * A byte-level BPE `tokenizer.json` (Hugging Face format) in the layout Qwen-family checkpoints ship:
 * regex split + byte-level pre-tokenizer, byte-level decoder, `specials` as special added tokens
 * numbered after the vocabulary.
 */
export function byteLevelBpeJson(
  vocab: Record<string, number>,
  merges: ReadonlyArray<readonly [string, string]>,
  specials: readonly string[],
): Record<string, unknown> {
  const first = Object.keys(vocab).length;
  const added = specials.map((content, i) => ({
    id: first + i,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  }));
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: { type: 'NFC' },
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: SPLIT_PATTERN }, behavior: 'Isolated', invert: false },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
      ],
    },
    post_processor: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges: merges.map(([a, b]) => [a, b]),
    },
  };
}

/** Merges, most frequent pair first, until every word of the corpus is a single symbol. */
function learnMerges(corpus: string[]): Array<[string, string]> {
  const words = corpus.flatMap((line) => pretokenize(line)).map((w) => [...w]);
  const merges: Array<[string, string]> = [];
  for (;;) {
    const counts = new Map<string, number>();
    for (const w of words)
      for (let j = 0; j + 1 < w.length; j++) {
        const key = `${w[j]}\u0000${w[j + 1]}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
    let best: string | null = null;
    for (const [key, n] of counts) if (best === null || n > (counts.get(best) ?? 0)) best = key;
    if (best === null) return merges;
    const [a, b] = best.split('\u0000') as [string, string];
    merges.push([a, b]);
    for (const w of words)
      for (let j = 0; j + 1 < w.length; j++) if (w[j] === a && w[j + 1] === b) w.splice(j, 2, a + b);
  }
}

export interface TinyTokenizer {
  json: Record<string, unknown>;
  vocabSize: number;
  /** Id of a word piece as the pre-tokenizer spells it (" let"), or of a special token. */
  id(piece: string): number;
}

export function buildTinyTokenizer(corpus: string[]): TinyTokenizer {
  const table = byteTable();
  const vocab: Record<string, number> = {};
  for (const ch of table) vocab[ch] = Object.keys(vocab).length;
  const merges = learnMerges(corpus);
  for (const [a, b] of merges) if (vocab[a + b] === undefined) vocab[a + b] = Object.keys(vocab).length;
  const first = Object.keys(vocab).length;
  const specials = Object.values(TINY_SPECIAL_TOKENS);
  return {
    json: byteLevelBpeJson(vocab, merges, specials),
    vocabSize: first + specials.length,
    id(piece: string): number {
      const special = specials.indexOf(piece as (typeof specials)[number]);
      if (special >= 0) return first + special;
      const [symbol, ...rest] = pretokenize(piece);
      const id = symbol === undefined || rest.length > 0 ? undefined : vocab[symbol];
      if (id === undefined) throw new Error(`"${piece}" is not one token of the tiny vocabulary`);
      return id;
    },
  };
}
