import type { RecogniserEvent, RecogniserGrammar, RecogniserStream } from '@venus/protocol';
import { compileGrammar } from '../../gpu-worker/src/perception/pocketsphinx/grammar-from-vocabulary.ts';
import { MODEL_DIR, PocketSphinxWasm } from '../../gpu-worker/src/perception/pocketsphinx/pocketsphinx-wasm.ts';
import { Pronunciations } from '../../gpu-worker/src/perception/pocketsphinx/pronunciations.ts';
import {
  DECODER_OPTIONS,
  scoreToConfidence,
} from '../../gpu-worker/src/perception/pocketsphinx/recogniser-protocol.ts';

/** As the recogniser thread: a stream's first two utterances, and any that comes out empty, are decoded twice. */
const SECOND_PASS_UTTERANCES = 2;
const SECOND_PASS_MAX_SAMPLES = 16 * 15_000;

/**
 * The PocketSphinx wasm decoder run on the caller's thread, behind the recogniser port: the same
 * module, model, grammar compilation, decoder options and second-pass rule as the recogniser's
 * worker thread (`recogniser-worker.ts`), but `push` decodes before it returns. The perception
 * bench uses it so that each step's decoding can be timed on its own; the running worker decodes
 * on a thread of its own instead.
 */
export class InlineRecogniser {
  private constructor(
    private readonly ps: PocketSphinxWasm,
    private readonly pronunciations: Pronunciations,
  ) {}

  static async load(): Promise<InlineRecogniser> {
    return new InlineRecogniser(await PocketSphinxWasm.load(), Pronunciations.load(MODEL_DIR));
  }

  open(grammar: RecogniserGrammar): InlineRecogniserStream {
    const compiled = compileGrammar(grammar, (w) => this.pronunciations.has(w));
    const decoder = this.ps.openGrammar(
      compiled.jsgf,
      DECODER_OPTIONS,
      this.pronunciations.dictionaryFor(compiled.words),
    );
    return new InlineRecogniserStream(this.ps, decoder, compiled.unknownWords);
  }
}

export class InlineRecogniserStream implements RecogniserStream {
  private readonly queue: RecogniserEvent[] = [];
  private wake: (() => void) | undefined;
  private closed = false;
  private utterance = 0;
  private inUtterance = false;
  private samples = 0;
  private audio: Int16Array[] = [];
  private lastPartial = '';
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
    private readonly ps: PocketSphinxWasm,
    private readonly decoder: number,
    readonly unknownWords: readonly string[],
  ) {}

  push(pcm: Int16Array): void {
    if (this.closed || pcm.length === 0) return;
    const t0 = process.cpuUsage();
    if (!this.inUtterance) {
      this.ps.start(this.decoder);
      this.inUtterance = true;
      this.samples = 0;
      this.audio = [];
      this.lastPartial = '';
    }
    this.ps.process(this.decoder, pcm);
    this.samples += pcm.length;
    if (this.samples <= SECOND_PASS_MAX_SAMPLES) this.audio.push(pcm.slice());
    const hyp = this.ps.hypothesis(this.decoder);
    if (hyp.text !== '' && hyp.text !== this.lastPartial) {
      this.lastPartial = hyp.text;
      this.emit({
        type: 'partial',
        utterance: this.utterance,
        text: hyp.text,
        score: perFrame(hyp),
        audioMs: this.samples / 16,
      });
    }
    this.decodeMs += cpuMsSince(t0);
  }

  endUtterance(): void {
    if (this.closed || !this.inUtterance) return;
    const t0 = process.cpuUsage();
    this.ps.end(this.decoder);
    this.inUtterance = false;
    let hyp = this.ps.hypothesis(this.decoder);
    if ((this.utterance < SECOND_PASS_UTTERANCES || hyp.text === '') && this.samples <= SECOND_PASS_MAX_SAMPLES) {
      this.ps.start(this.decoder);
      for (const pcm of this.audio) this.ps.process(this.decoder, pcm);
      this.ps.end(this.decoder);
      hyp = this.ps.hypothesis(this.decoder);
    }
    this.audio = [];
    const score = perFrame(hyp);
    const confidence = hyp.text === '' ? 0 : scoreToConfidence(score);
    this.emit({
      type: 'final',
      utterance: this.utterance++,
      text: hyp.text,
      score,
      confidence,
      inGrammar: confidence >= 0.5,
      audioMs: this.samples / 16,
    });
    this.decodeMs += cpuMsSince(t0);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.ps.free(this.decoder);
    this.wake?.();
  }

  private emit(e: RecogniserEvent): void {
    this.queue.push(e);
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}

function perFrame(hyp: { score: number; frames: number }): number {
  return hyp.frames > 0 ? hyp.score / hyp.frames : 0;
}

/** Process CPU time (user + system) since `start`, in ms. */
export function cpuMsSince(start: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1000;
}
