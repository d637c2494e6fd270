/**
 * How long after a spoken fragment's final (itself ~0.5 s after the speech ended) the model waits
 * for the user to go on before answering the fragment alone: people pause mid-request for 1-2 s.
 */
export const MID_TURN_PAUSE_MS = 1500;

/**
 * A spoken utterance that is not a whole request yet ("could you tell me", "I'd like to know the
 * weather"), held while the user may go on after a pause: the next utterance is heard joined to
 * it, and it is answered alone only once the user stayed silent until the pause ran out (audio
 * time). The held text is '' for words the grammar did not fit (answered, if alone, with a request
 * to repeat).
 *
 * @example
 *   hold.hold('could you tell me', atMs);
 *   const due = hold.due(laterMs, userSpeaking); // the words to answer alone, once the pause ran out
 */
export class MidTurnHold {
  #held: { text: string; untilMs: number } | null = null;

  /** Holds `text`, heard at `atMs`. */
  hold(text: string, atMs: number): void {
    this.#held = { text, untilMs: atMs + MID_TURN_PAUSE_MS };
  }

  /** The held words, no longer held (the next utterance is heard joined to them), or null. */
  take(): string | null {
    const held = this.#held;
    this.#held = null;
    return held === null ? null : held.text;
  }

  /**
   * A step at `atMs`: while the user speaks the pause starts again (their words are awaited);
   * once it ran out, the held words are returned, no longer held, to be answered alone.
   */
  due(atMs: number, userSpeaking: boolean): string | null {
    const held = this.#held;
    if (held === null) return null;
    if (userSpeaking) held.untilMs = Math.max(held.untilMs, atMs + MID_TURN_PAUSE_MS);
    else if (atMs >= held.untilMs) return this.take();
    return null;
  }
}
