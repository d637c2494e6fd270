import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { VenusError } from '@venus/protocol';

/**
 * The served checkpoint's own tokenizer, read from its `tokenizer.json` (and the sibling
 * `tokenizer_config.json` when present) with the pure-JS Hugging Face tokenizers library, offline.
 * It turns the raw token ids the service streams into text and resolves protocol-token ids.
 *
 * @example
 *   const tk = await CheckpointTokenizer.load('/models/Realtime-Venus-Omni/tokenizer.json');
 *   tk.idOf('<|speak|>'); // 151667 (or whatever the checkpoint assigns)
 */
export class CheckpointTokenizer {
  private readonly tokenizer: Tokenizer;

  private constructor(tokenizer: Tokenizer) {
    this.tokenizer = tokenizer;
  }

  static async load(path: string): Promise<CheckpointTokenizer> {
    try {
      const json = JSON.parse(await readFile(path, 'utf8')) as object;
      const configPath = join(dirname(path), 'tokenizer_config.json');
      const config = existsSync(configPath) ? (JSON.parse(await readFile(configPath, 'utf8')) as object) : {};
      return new CheckpointTokenizer(new Tokenizer(json, config));
    } catch (err) {
      throw new VenusError('model_unavailable', `cannot load the checkpoint tokenizer from ${path}: ${String(err)}`, {
        cause: err,
        retryable: false,
      });
    }
  }

  idOf(token: string): number | undefined {
    return this.tokenizer.token_to_id(token);
  }

  has(id: number): boolean {
    return this.tokenizer.id_to_token(id) !== undefined;
  }

  /** Text of ordinary tokens; other special tokens of the checkpoint are not speech and are dropped. */
  decode(ids: readonly number[]): string {
    return ids.length === 0 ? '' : this.tokenizer.decode([...ids], { skip_special_tokens: true });
  }

  encode(text: string): number[] {
    return this.tokenizer.encode(text, { add_special_tokens: false }).ids;
  }
}

export interface DecodedDelta {
  /** Visible text with `<delegate>`/`</delegate>` kept as literal tags for the host's parser. */
  text: string;
  speak: boolean;
  listen: boolean;
  turnEos: boolean;
}

const REPLACEMENT = '\uFFFD';
/** Tokens held back at most while they still end in an incomplete character. */
const MAX_HELD_TOKENS = 8;
/** Ordinary tokens kept as left context so word-initial spaces decode the same as in one piece. */
const CONTEXT_TOKENS = 4;

/**
 * Stateful decoder of one session's delta token stream (`raw_token_mode: "delta"`).
 *
 * Text is detokenized incrementally: each delta is decoded together with a little left context and
 * only the new suffix is emitted, and a suffix that ends inside a multi-byte character waits for the
 * next delta, so splitting the stream anywhere yields the same text as decoding it whole. Protocol
 * tokens never become text, except the delegate tags, which the host parses; as in the official
 * harness, a `<|turn_eos|>` inside an open delegate span closes it, a stray `</delegate>` is dropped,
 * and `<backend>` tags on the output side are dropped.
 *
 * @example
 *   const d = new TokenStreamDecoder(tokenizer, specialTokenIds);
 *   d.push([speakId, ...tokenizer.encode('Let me check.'), delegateOpenId]); // { text: 'Let me check.<delegate>', speak: true, ... }
 */
export class TokenStreamDecoder {
  private readonly tokenizer: CheckpointTokenizer;
  private readonly special: Map<number, string>;
  private window: number[] = [];
  /** window[0, read) was already emitted; window[0, prefix) is context only. */
  private prefix = 0;
  private read = 0;
  private insideDelegate = false;

  constructor(tokenizer: CheckpointTokenizer, specialTokenIds: Readonly<Record<string, number>>) {
    this.tokenizer = tokenizer;
    this.special = new Map(Object.entries(specialTokenIds).map(([name, id]) => [id, name]));
  }

  push(ids: readonly number[]): DecodedDelta {
    const out: DecodedDelta = { text: '', speak: false, listen: false, turnEos: false };
    for (const id of ids) {
      const name = this.special.get(id);
      if (name === undefined) {
        if (this.tokenizer.has(id)) this.window.push(id);
        continue;
      }
      switch (name) {
        case '<|speak|>':
          out.speak = true;
          break;
        case '<|listen|>':
          out.listen = true;
          break;
        case '<|turn_eos|>':
          out.turnEos = true;
          if (this.insideDelegate) out.text += this.tag('</delegate>');
          break;
        case '<delegate>':
          out.text += this.tag('<delegate>');
          this.insideDelegate = true;
          break;
        case '</delegate>':
          if (this.insideDelegate) out.text += this.tag('</delegate>');
          break;
        default:
          // <|chunk_eos|>, <unit>, <image>, <backend> and their closers: structure, not speech.
          break;
      }
    }
    out.text += this.drain(false);
    return out;
  }

  /** Emits whatever is still held (end of an utterance), even an incomplete character. */
  flush(): string {
    return this.drain(true);
  }

  /** Forgets all state (a new generation that does not continue the previous text). */
  reset(): void {
    this.window = [];
    this.prefix = 0;
    this.read = 0;
    this.insideDelegate = false;
  }

  private tag(tag: string): string {
    // Tags are separate tokens: flush the text before one and start fresh context after it.
    const before = this.drain(true);
    this.window = [];
    this.prefix = 0;
    this.read = 0;
    if (tag === '</delegate>') this.insideDelegate = false;
    return before + tag;
  }

  private drain(force: boolean): string {
    if (this.read >= this.window.length) return '';
    const known = this.tokenizer.decode(this.window.slice(this.prefix, this.read));
    let end = this.window.length;
    let all = this.tokenizer.decode(this.window.slice(this.prefix, end));
    if (!force && all.endsWith(REPLACEMENT)) {
      // An incomplete character spans at most the last three tokens: emit up to a clean cut.
      for (let cut = end - 1; cut > this.read && end - cut <= 3; cut--) {
        const text = this.tokenizer.decode(this.window.slice(this.prefix, cut));
        if (!text.endsWith(REPLACEMENT)) {
          end = cut;
          all = text;
          break;
        }
      }
      if (all.endsWith(REPLACEMENT) && this.window.length - this.read < MAX_HELD_TOKENS) return '';
    }
    if (!force && all.length <= known.length) return '';
    const text = all.startsWith(known) ? all.slice(known.length) : all;
    this.read = end;
    this.prefix = Math.max(0, this.read - CONTEXT_TOKENS);
    if (this.prefix > 0) {
      this.window = this.window.slice(this.prefix);
      this.read -= this.prefix;
      this.prefix = 0;
    }
    return text;
  }
}
