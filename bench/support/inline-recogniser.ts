import type { RecogniserEvent, RecogniserGrammar, RecogniserStream } from '@venus/protocol';
import { compileGrammar } from '../../gpu-worker/src/perception/pocketsphinx/grammar-from-vocabulary.ts';
import { MODEL_DIR, PocketSphinxWasm } from '../../gpu-worker/src/perception/pocketsphinx/pocketsphinx-wasm.ts';
import { Pronunciations } from '../../gpu-worker/src/perception/pocketsphinx/pronunciations.ts';
import { DECODER_OPTIONS } from '../../gpu-worker/src/perception/pocketsphinx/recogniser-protocol.ts';
import { StreamDecoder } from '../../gpu-worker/src/perception/pocketsphinx/stream-decoder.ts';
import { TelephoneMap } from '../../gpu-worker/src/perception/pocketsphinx/telephone-band.ts';

/**
 * The PocketSphinx wasm decoder run on the caller's thread, behind the recogniser port: the same
 * module, model, grammar compilation, decoder options and per-stream decoding (StreamDecoder) as
 * the recogniser's worker thread (`recogniser-worker.ts`), but `push` decodes before it returns.
 * The perception bench uses it so that each step's decoding can be timed on its own; the running
 * worker decodes on a thread of its own instead.
 */
export class InlineRecogniser {
  private constructor(
    private readonly ps: PocketSphinxWasm,
    private readonly pronunciations: Pronunciations,
    private readonly telephoneMap: TelephoneMap,
  ) {}

  static async load(): Promise<InlineRecogniser> {
    return new InlineRecogniser(await PocketSphinxWasm.load(), Pronunciations.load(MODEL_DIR), TelephoneMap.load());
  }

  open(grammar: RecogniserGrammar): InlineRecogniserStream {
    const compiled = compileGrammar(grammar, (w) => this.pronunciations.has(w));
    const decoder = this.ps.openGrammar(
      compiled.jsgf,
      DECODER_OPTIONS,
      this.pronunciations.dictionaryFor(compiled.words),
    );
    return new InlineRecogniserStream(new StreamDecoder(this.ps, this.telephoneMap, decoder), compiled.unknownWords);
  }
}

export class InlineRecogniserStream implements RecogniserStream {
  private readonly queue: RecogniserEvent[] = [];
  private wake: (() => void) | undefined;
  private closed = false;
  /** CPU ms spent decoding (in `push` and `endUtterance`), for the bench's breakdown. */
  decodeMs = 0;

  readonly events: AsyncIterable<RecogniserEvent> = {
    [Symbol.asyncIterator]: async function* (this: InlineRecogniserStream) {
      for (;;) {
        const next = this.queue.shift();
        if (next) yield next;
        else if (this.closed) return;
        else await new Promise<void>((r) => (this.wake = r));
      }
    }.bind(this),
  };

  constructor(
    private readonly decoder: StreamDecoder,
    readonly unknownWords: readonly string[],
  ) {}

  push(pcm: Int16Array): void {
    if (this.closed || pcm.length === 0) return;
    const t0 = process.cpuUsage();
    // A copy: the decoder keeps the utterance's audio for a second pass, and callers reuse buffers.
    const partial = this.decoder.push(pcm.slice());
    this.decodeMs += cpuMsSince(t0);
    if (partial) this.emit(partial);
  }

  endUtterance(): void {
    if (this.closed) return;
    const t0 = process.cpuUsage();
    const final = this.decoder.end();
    this.decodeMs += cpuMsSince(t0);
    if (final) this.emit(final);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.decoder.free();
    this.wake?.();
  }

  private emit(e: RecogniserEvent): void {
    this.queue.push(e);
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}

/** Process CPU time (user + system) since `start`, in ms. */
export function cpuMsSince(start: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1000;
}
