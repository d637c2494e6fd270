import { normalize } from './intents.ts';

/**
 * A client's transcript of the user's speech and the recogniser's words for it are one utterance,
 * whichever comes first: within SAME_SPEECH_MS of session time the second is not acted on again (a
 * client text that shares at least half its words with speech just acted on; any recognised words
 * after a client text). So a client that sends transcripts with its audio is not answered twice; a
 * message typed within that time after speaking shares this fate only if it repeats the speech.
 *
 * @example
 *   const same = new SameSpeech();
 *   same.actedOn('what time is it in tokyo', 1000);
 *   same.keepTexts(['What time is it in Tokyo?'], 1600); // []
 */
export const SAME_SPEECH_MS = 5000;

export class SameSpeech {
  private textAtMs = Number.NEGATIVE_INFINITY;
  private speech = { words: new Set<string>(), atMs: Number.NEGATIVE_INFINITY };

  /** Client texts of a step at `atMs`: those that do not repeat the speech just acted on. */
  keepTexts(texts: readonly string[], atMs: number): string[] {
    this.textAtMs = atMs;
    if (atMs - this.speech.atMs >= SAME_SPEECH_MS) return [...texts];
    return texts.filter((t) => {
      const words = normalize(t).split(' ');
      const shared = words.filter((w) => this.speech.words.has(w)).length;
      return shared * 2 < words.length;
    });
  }

  /** Whether recognised words at `atMs` follow a client text closely enough to be the same speech. */
  textCameFirst(atMs: number): boolean {
    return atMs - this.textAtMs < SAME_SPEECH_MS;
  }

  /** Recognised words the model acted on. */
  actedOn(text: string, atMs: number): void {
    this.speech = { words: new Set(normalize(text).split(' ')), atMs };
  }
}
