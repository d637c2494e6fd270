import type { RecogniserGrammar, RecogniserStream } from '@venus/protocol';
import { PocketSphinxRecogniser } from './pocketsphinx-recogniser.ts';

export interface SessionRecognisersOptions {
  /** What every session may say (the demo domain plus the functions known at start). */
  grammar: RecogniserGrammar;
  /** Streams at once (one decoder, ~10 MB, each); sessions past it go without words. */
  maxStreams: number;
}

/**
 * The recogniser of one inference thread: a PocketSphinx worker thread started at the first
 * session that speaks (not at thread start, so threads whose sessions never speak pay nothing),
 * and one stream per session, its grammar extended by that session's own phrases.
 *
 * @example
 *   const recognisers = new SessionRecognisers({ grammar: DEMO_GRAMMAR, maxStreams: 32 });
 *   const stream = await recognisers.open(['remind me to call Anna']);
 */
export class SessionRecognisers {
  private starting: Promise<PocketSphinxRecogniser> | null = null;

  constructor(private readonly options: SessionRecognisersOptions) {}

  async open(phrases: readonly string[]): Promise<RecogniserStream> {
    this.starting ??= PocketSphinxRecogniser.start({ maxStreams: this.options.maxStreams });
    const recogniser = await this.starting;
    const { grammar } = this.options;
    return recogniser.open({ grammar: { phrases: [...grammar.phrases, ...phrases], slots: grammar.slots ?? {} } });
  }

  async close(): Promise<void> {
    const starting = this.starting;
    this.starting = null;
    if (!starting) return;
    const recogniser = await starting.catch(() => null);
    await recogniser?.close();
  }
}
