/**
 * What the user heard of an assistant utterance: the one rule every part of the runtime uses (the
 * session host for `heardText` on the timeline, and every model for what its context keeps).
 *
 * An utterance is spoken as segments, each a piece of visible text and the length of the speech
 * synthesised for it (a whole reply for the reference voice, a sentence for the cascade). The heard
 * text is every segment whose speech was played to its end, then the played share of the next one,
 * cut back to a word boundary: a word is heard only when the audio passed its end (estimated by an
 * even speaking rate within the segment). Text whose speech is not known yet is never counted as
 * heard.
 *
 * @example
 *   heardText([{ text: 'It is sunny in Paris.', durationMs: 1500 }], 800); // "It is sunny"
 */
export interface SpokenSegment {
  /** Visible text of the segment (delegate spans and reserved tags already removed). */
  text: string;
  /** Length of its synthesised speech in ms. */
  durationMs: number;
}

export function heardText(segments: readonly SpokenSegment[], playedMs: number): string {
  let budget = Math.max(0, playedMs);
  const heard: string[] = [];
  for (const segment of segments) {
    const text = segment.text.trim();
    if (text === '') {
      budget -= segment.durationMs;
      continue;
    }
    if (budget >= segment.durationMs - 0.5) {
      heard.push(text);
      budget -= segment.durationMs;
      continue;
    }
    if (budget > 0 && segment.durationMs > 0) heard.push(cutAtWord(text, (text.length * budget) / segment.durationMs));
    break;
  }
  return heard.filter(Boolean).join(' ');
}

/** The text up to `chars` characters, cut back to the last whole word (empty before the first word ends). */
function cutAtWord(text: string, chars: number): string {
  const at = Math.floor(chars);
  if (at >= text.length) return text;
  if (text[at] === ' ') return text.slice(0, at).trim();
  const cut = text.lastIndexOf(' ', at);
  return cut > 0 ? text.slice(0, cut).trim() : '';
}

/**
 * The segments of an utterance as it is being spoken, for a host that sees text and audio arrive
 * separately: explicit segments where the model reports them, else one segment holding all visible
 * text over all emitted audio (the estimate a plain model allows).
 */
export class SpokenTextAccount {
  private readonly reported: SpokenSegment[] = [];
  private visible = '';
  private audioMs = 0;

  addText(visible: string): void {
    this.visible += visible;
  }

  addAudio(durationMs: number): void {
    this.audioMs += durationMs;
  }

  addSegments(segments: readonly SpokenSegment[]): void {
    this.reported.push(...segments);
  }

  get text(): string {
    return this.visible;
  }

  get emittedMs(): number {
    return this.audioMs;
  }

  /**
   * Heard text after `playedMs`. Without reported segments, the emitted audio is taken to carry the
   * visible text at an even rate once the utterance finished, and at `msPerChar` before (its full
   * length is not known yet).
   */
  heardText(playedMs: number, finished: boolean, msPerChar: number): string {
    if (this.reported.length > 0) return heardText(this.reported, playedMs);
    const durationMs = finished ? this.audioMs : Math.max(this.audioMs, this.visible.trim().length * msPerChar);
    return heardText([{ text: this.visible, durationMs }], playedMs);
  }
}
