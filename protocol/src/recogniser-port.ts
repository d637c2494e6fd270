/**
 * The recogniser port: speech in, words out, one stream per session. The reference model hears
 * words through it (PocketSphinx in a worker thread today); a better recogniser replaces it by
 * implementing this interface, nothing else changes.
 *
 * A stream decodes against a grammar (what may be said), fed 16 kHz mono PCM as it arrives. The
 * caller decides where an utterance ends (its own voice activity detection) and calls
 * `endUtterance()`; audio pushed after that starts the next utterance. Events arrive in order:
 * `partial` whenever the best hypothesis changes (early words such as "stop" or "actually" matter
 * to the interruption policy before the user has finished), then one `final` per utterance.
 *
 * @example
 *   const stream = await recogniser.open({ grammar: { phrases: ['stop', 'what time is it in <city>'], slots: { city: ['Paris'] } } });
 *   stream.push(pcm16k);
 *   stream.endUtterance();
 *   for await (const event of stream.events) if (event.type === 'final') console.log(event.text, event.inGrammar);
 */

/**
 * What may be said: phrases of plain words, where `<name>` stands for any entry of `slots[name]`.
 * Any sequence of phrases is accepted ("actually" + "make it <city>"). Words the recogniser has no
 * pronunciation for are dropped with the phrases that use them and reported on the stream.
 */
export interface RecogniserGrammar {
  readonly phrases: readonly string[];
  readonly slots?: Readonly<Record<string, readonly string[]>>;
}

export interface RecogniserStreamOptions {
  readonly grammar: RecogniserGrammar;
}

export interface RecogniserPartial {
  readonly type: 'partial';
  /** Utterance number in this stream, from 0. */
  readonly utterance: number;
  readonly text: string;
  /** Acoustic log-likelihood of the hypothesis per 10 ms frame (higher is better; comparable within one recogniser only). */
  readonly score: number;
  /** Audio of this utterance decoded so far. */
  readonly audioMs: number;
}

export interface RecogniserFinal {
  readonly type: 'final';
  readonly utterance: number;
  /** The best in-grammar reading; '' when nothing was recognised. */
  readonly text: string;
  readonly score: number;
  /**
   * How well the grammar explains the audio compared with an open-vocabulary reading, 0..1. A grammar
   * maps any speech onto itself, so `text` alone says nothing about whether it was said.
   */
  readonly confidence: number;
  /** `confidence` is over the recogniser's rejection threshold: the words were probably said. */
  readonly inGrammar: boolean;
  readonly audioMs: number;
}

export type RecogniserEvent = RecogniserPartial | RecogniserFinal;

export interface RecogniserStream {
  /** Words of the grammar the recogniser could not pronounce (their phrases were dropped). */
  readonly unknownWords: readonly string[];
  /** Every event, in order; ends after `close()`. */
  readonly events: AsyncIterable<RecogniserEvent>;
  /** 16 kHz mono PCM. Throws `session_closed` after close, `rate_limited` when the decoder is too far behind. */
  push(pcm: Int16Array): void;
  /** Ends the current utterance: its `final` event follows. A no-op when no audio came since the last one. */
  endUtterance(): void;
  /** Frees the decoder. Pending audio is dropped; `events` ends. */
  close(): Promise<void>;
}

export interface RecogniserCapabilities {
  readonly sampleRate: 16000;
  readonly streamingPartials: boolean;
  /** Whether `final.inGrammar` comes from a real second signal (not a constant). */
  readonly rejectsOutOfGrammar: boolean;
  /** Streams one instance can hold at once (memory is bounded per stream). */
  readonly maxStreams: number;
}

export interface RecogniserPort {
  readonly capabilities: RecogniserCapabilities;
  open(options: RecogniserStreamOptions): Promise<RecogniserStream>;
  /** Closes every stream and the recogniser's thread. */
  close(): Promise<void>;
}
