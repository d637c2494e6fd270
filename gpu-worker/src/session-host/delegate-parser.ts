/**
 * Streaming parser for the hidden `<delegate>…</delegate>` span in the model's raw text.
 *
 * Text arrives in arbitrary pieces (one per model step, split anywhere). Anything that could still
 * become a tag is held back until it either completes a tag or cannot, so a partial `<delegate`
 * never reaches displayed text or speech, whatever the chunking. One span per turn: an empty,
 * unterminated or second span is reported as an error and its content stays hidden.
 *
 * @example
 *   const p = new DelegateParser();
 *   p.push('Let me check. <dele');            // visible: 'Let me check. '
 *   p.push('gate>weather in Paris</delegate>'); // events: open, close('weather in Paris')
 *   p.endTurn();
 */
export type DelegateParseEvent =
  | { kind: 'text'; text: string }
  | { kind: 'open' }
  | { kind: 'close'; query: string }
  | { kind: 'error'; reason: 'empty' | 'unterminated' | 'second_span' | 'stray_close' };

const OPEN = '<delegate>';
const CLOSE = '</delegate>';

export class DelegateParser {
  private inside = false;
  /** Characters held back because they may be the start of a tag. */
  private held = '';
  private query = '';
  private spansThisTurn = 0;

  /** Feeds a piece of raw text; returns what it yields, in order. */
  push(piece: string): DelegateParseEvent[] {
    const out: DelegateParseEvent[] = [];
    let visible = '';
    const flushVisible = (): void => {
      if (visible && !this.inside) out.push({ kind: 'text', text: visible });
      visible = '';
    };
    let input = this.held + piece;
    this.held = '';
    while (input.length > 0) {
      const lt = input.indexOf('<');
      if (lt < 0) {
        this.consume(input, (t) => {
          visible += t;
        });
        break;
      }
      this.consume(input.slice(0, lt), (t) => {
        visible += t;
      });
      const rest = input.slice(lt);
      const match = matchTag(rest, this.inside);
      if (match === 'partial') {
        this.held = rest;
        break;
      }
      if (match === null) {
        // A '<' that starts no tag of ours: ordinary character.
        this.consume('<', (t) => {
          visible += t;
        });
        input = rest.slice(1);
        continue;
      }
      flushVisible();
      input = rest.slice(match.tag.length);
      if (match.tag === OPEN) {
        if (this.inside) continue; // nested open: hidden like the rest of the span
        this.inside = true;
        this.query = '';
        this.spansThisTurn += 1;
        if (this.spansThisTurn === 1) out.push({ kind: 'open' });
      } else if (!this.inside) {
        out.push({ kind: 'error', reason: 'stray_close' });
      } else {
        this.inside = false;
        const query = this.query.trim();
        if (this.spansThisTurn > 1) out.push({ kind: 'error', reason: 'second_span' });
        else if (!query) out.push({ kind: 'error', reason: 'empty' });
        else out.push({ kind: 'close', query });
        this.query = '';
      }
    }
    flushVisible();
    return out;
  }

  /** Ends the turn: an open span is an error; held tag fragments are dropped, never shown. */
  endTurn(): DelegateParseEvent[] {
    const out: DelegateParseEvent[] = [];
    if (this.inside) out.push({ kind: 'error', reason: 'unterminated' });
    this.inside = false;
    this.held = '';
    this.query = '';
    this.spansThisTurn = 0;
    return out;
  }

  get isInsideSpan(): boolean {
    return this.inside;
  }

  private consume(text: string, visible: (t: string) => void): void {
    if (!text) return;
    if (this.inside) this.query += text;
    else visible(text);
  }
}

/** Whether `text` (starting with '<') begins with a tag, could still become one, or cannot. */
function matchTag(text: string, inside: boolean): { tag: string } | 'partial' | null {
  const candidates = inside ? [CLOSE, OPEN] : [OPEN, CLOSE];
  let partial = false;
  for (const tag of candidates) {
    const head = text.slice(0, tag.length).toLowerCase();
    if (head === tag) return { tag };
    if (text.length < tag.length && tag.startsWith(head)) partial = true;
  }
  return partial ? 'partial' : null;
}
