/** A sentence ends at . ! ? or … (closing quotes and brackets included) followed by whitespace. */
const BOUNDARY = /[.!?…]+["'”’)\]]*\s+/g;
/** A sentence this long with no boundary yet is cut at a comma or a space, so speech can start. */
const MAX_SENTENCE_CHARS = 220;
/** Sentences shorter than this ("Hi." "So.") wait to be spoken with the next one. */
const MIN_SENTENCE_CHARS = 12;

/**
 * Cuts streamed visible text into sentences to synthesise one by one, so speech starts after the
 * first sentence rather than the whole reply. Text that says nothing speakable (only punctuation
 * or whitespace) is dropped.
 *
 * @example
 *   const s = new SentenceSplitter();
 *   s.push('Sure. It is 18 degr'); // ['Sure.'] is too short alone, so: []
 *   s.push('ees in Paris. Anything');   // ['Sure. It is 18 degrees in Paris.']
 *   s.flush();                          // ['Anything']
 */
export class SentenceSplitter {
  private buffer = '';

  push(text: string): string[] {
    this.buffer += text;
    const out: string[] = [];
    for (;;) {
      const cut = this.nextCut();
      if (cut === null) break;
      const sentence = this.buffer.slice(0, cut).trim();
      this.buffer = this.buffer.slice(cut);
      if (speakable(sentence)) out.push(sentence);
    }
    return out;
  }

  /** The rest, at the end of the reply. */
  flush(): string[] {
    const rest = this.buffer.trim();
    this.buffer = '';
    return speakable(rest) ? [rest] : [];
  }

  private nextCut(): number | null {
    BOUNDARY.lastIndex = 0;
    for (let match = BOUNDARY.exec(this.buffer); match; match = BOUNDARY.exec(this.buffer)) {
      const end = match.index + match[0].length;
      if (this.buffer.slice(0, end).trim().length >= MIN_SENTENCE_CHARS) return end;
    }
    if (this.buffer.length < MAX_SENTENCE_CHARS) return null;
    const window = this.buffer.slice(0, MAX_SENTENCE_CHARS);
    const comma = window.lastIndexOf(', ');
    if (comma > MIN_SENTENCE_CHARS) return comma + 2;
    const space = window.lastIndexOf(' ');
    return space > 0 ? space + 1 : MAX_SENTENCE_CHARS;
  }
}

function speakable(text: string): boolean {
  return /[\p{L}\p{N}]/u.test(text);
}
