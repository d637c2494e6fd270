import { fileURLToPath } from 'node:url';
import { VenusError } from '@venus/protocol';
import * as ort from 'onnxruntime-node';
import { MicroBatcher } from './micro-batcher.ts';

/**
 * Google's speech embedding (the shared front end of openWakeWord) as a streaming feature: 16 kHz
 * audio -> 32-bin log-mel frames every 10 ms (`melspectrogram.onnx`, scaled by x/10 + 2 as
 * openWakeWord does) -> one 96-d embedding every 80 ms over the last 76 mel frames
 * (`embedding_model.onnx`). See `models/speech-embedding/README.md` for the files and licences.
 *
 * Computed lazily: a stream keeps its recent audio and computes mel frames and embeddings only for
 * the 80 ms hops someone asks for (the overlap head asks during overlapping speech only), caching
 * both, so a session that is not overlapping costs nothing but the copy of its audio.
 */
export const EMBEDDING_DIM = 96;
/** One embedding per hop of 1280 samples (80 ms). */
export const HOP_SAMPLES = 1280;
const MEL_BINS = 32;
const MELS_PER_HOP = 8;
/** openWakeWord computes each hop's mel frames with 480 samples (3 mel hops) of the audio before it. */
const MEL_CONTEXT = 480;
const MEL_INPUT = HOP_SAMPLES + MEL_CONTEXT;
const WINDOW_FRAMES = 76;
/** Hops whose mel frames one embedding's window reaches into (76 frames = 9.5 hops). */
const WINDOW_HOPS = Math.ceil(WINDOW_FRAMES / MELS_PER_HOP);
/** Audio a stream keeps: 8 s, enough for a burst mean of 2 s on rows up to a 4 s chunk old, with their windows. */
const RING_SAMPLES = 16_000 * 8;
/** Hops kept in the caches behind the newest. */
const CACHED_HOPS = 64;

const MODEL_DIR = new URL('../../models/speech-embedding/', import.meta.url);
export const MELSPECTROGRAM_PATH = fileURLToPath(new URL('melspectrogram.onnx', MODEL_DIR));
export const EMBEDDING_MODEL_PATH = fileURLToPath(new URL('embedding_model.onnx', MODEL_DIR));

/**
 * One audio stream's recent audio (as the 16-bit values openWakeWord's models take) and its cached
 * mel frames and embeddings per hop. Hop `h` is samples [h*1280, (h+1)*1280) of the stream; audio
 * before the stream's start is silence. Pure data: the SpeechEmbedding model fills the caches.
 */
export class EmbeddingStream {
  /** Samples pushed since the stream started. */
  samples = 0;
  private readonly ring = new Int16Array(RING_SAMPLES);
  readonly mels = new Map<number, Float32Array>();
  readonly embeddings = new Map<number, Float32Array>();

  /** Appends float samples in [-1, 1] (16 kHz). */
  push(x: Float32Array): void {
    for (let i = 0; i < x.length; i++) {
      const v = Math.round(x[i]! * 32768);
      this.ring[(this.samples + i) % RING_SAMPLES] = Math.min(32767, Math.max(-32768, v));
    }
    this.samples += x.length;
    const newest = this.latestHop();
    for (const cache of [this.mels, this.embeddings])
      for (const hop of cache.keys()) if (hop < newest - CACHED_HOPS) cache.delete(hop);
  }

  /** The newest complete hop at stream position `sample` (-1 before the first is complete). */
  static hopAt(sample: number): number {
    return Math.floor(sample / HOP_SAMPLES) - 1;
  }

  latestHop(): number {
    return EmbeddingStream.hopAt(this.samples);
  }

  /** Whether hop `h`'s embedding can still be computed (or is cached). */
  has(hop: number): boolean {
    if (this.embeddings.has(hop)) return true;
    return (
      hop <= this.latestHop() && (hop - WINDOW_HOPS + 1) * HOP_SAMPLES - MEL_CONTEXT >= this.samples - RING_SAMPLES
    );
  }

  /** The mel model's input for hop `h`: the hop and the 480 samples before it, as float values of int16. */
  melInput(hop: number, into: Float32Array): void {
    const start = hop * HOP_SAMPLES - MEL_CONTEXT;
    for (let i = 0; i < MEL_INPUT; i++) {
      const at = start + i;
      into[i] = at < 0 ? 0 : this.ring[at % RING_SAMPLES]!;
    }
  }

  /** The embedding model's input for hop `h` (its 76 mel frames), once the mels of its window are cached. */
  window(hop: number, into: Float32Array): void {
    const skip = WINDOW_HOPS * MELS_PER_HOP - WINDOW_FRAMES;
    let at = 0;
    for (let k = hop - WINDOW_HOPS + 1; k <= hop; k++) {
      const mel = this.mels.get(k)!;
      const from = k === hop - WINDOW_HOPS + 1 ? skip : 0;
      into.set(mel.subarray(from * MEL_BINS), at);
      at += (MELS_PER_HOP - from) * MEL_BINS;
    }
  }

  /** Hops of hop `h`'s window whose mel frames are not cached. */
  missingMels(hop: number): number[] {
    const out: number[] = [];
    for (let k = hop - WINDOW_HOPS + 1; k <= hop; k++) if (!this.mels.has(k)) out.push(k);
    return out;
  }
}

export interface EmbeddingRequest {
  stream: EmbeddingStream;
  hops: number[];
}

/**
 * The two ONNX models through onnxruntime-node (one intra-op thread each). `embed` answers the
 * embeddings of some hops of some streams; the requests of many sessions made in one turn of the
 * event loop run together (MicroBatcher): the missing mel frames hop by hop (see runMels), the
 * missing embeddings as one batch.
 *
 * @example
 *   const model = await SpeechEmbedding.create();
 *   const stream = new EmbeddingStream();
 *   stream.push(samples16k);
 *   const [[e]] = await model.embed([{ stream, hops: [stream.latestHop()] }]); // Float32Array(96)
 */
export class SpeechEmbedding {
  private readonly batcher = new MicroBatcher<EmbeddingRequest, Float32Array[]>((batch) => this.flush(batch));
  private closed = false;

  private constructor(
    private readonly mel: ort.InferenceSession,
    private readonly embedding: ort.InferenceSession,
    private readonly maxBatch: number,
  ) {}

  static async create(options: { maxBatch?: number; intraOpNumThreads?: number } = {}): Promise<SpeechEmbedding> {
    const sessionOptions: ort.InferenceSession.SessionOptions = {
      intraOpNumThreads: options.intraOpNumThreads ?? 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
    };
    const [mel, embedding] = await Promise.all([
      ort.InferenceSession.create(MELSPECTROGRAM_PATH, sessionOptions),
      ort.InferenceSession.create(EMBEDDING_MODEL_PATH, sessionOptions),
    ]);
    return new SpeechEmbedding(mel, embedding, Math.max(1, options.maxBatch ?? 64));
  }

  /** The embeddings of `hops` of each request's stream (each must satisfy `stream.has`). */
  embed(requests: readonly EmbeddingRequest[]): Promise<Float32Array[][]> {
    return Promise.all(requests.map((r) => (r.hops.length === 0 ? Promise.resolve([]) : this.batcher.submit(r))));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.mel.release();
    await this.embedding.release();
  }

  private async flush(batch: EmbeddingRequest[]): Promise<Array<PromiseSettledResult<Float32Array[]>>> {
    try {
      if (this.closed) throw new VenusError('model_unavailable', 'speech embedding model is closed');
      for (const r of batch) {
        for (const hop of r.hops)
          if (!r.stream.has(hop))
            throw new VenusError('internal_error', `speech embedding: hop ${hop} is no longer in the stream`);
      }
      // Mel frames of every hop some missing embedding's window needs, each once.
      const melJobs: Array<{ stream: EmbeddingStream; hop: number }> = [];
      const embedJobs: Array<{ stream: EmbeddingStream; hop: number }> = [];
      for (const r of batch) {
        for (const hop of new Set(r.hops)) {
          if (r.stream.embeddings.has(hop) || embedJobs.some((j) => j.stream === r.stream && j.hop === hop)) continue;
          embedJobs.push({ stream: r.stream, hop });
          for (const k of r.stream.missingMels(hop))
            if (!melJobs.some((j) => j.stream === r.stream && j.hop === k)) melJobs.push({ stream: r.stream, hop: k });
        }
      }
      await this.runMels(melJobs);
      await this.runEmbeddings(embedJobs);
      return batch.map((r) => ({ status: 'fulfilled', value: r.hops.map((h) => r.stream.embeddings.get(h)!) }));
    } catch (reason) {
      return batch.map(() => ({ status: 'rejected', reason }));
    }
  }

  /**
   * One hop per run, as openWakeWord computes them: the model clips its log-mel output at 80 dB
   * under the maximum of the whole input tensor, so hops run as one batch would share one floor
   * and a hop's frames would depend on what else was in its batch.
   */
  private async runMels(jobs: Array<{ stream: EmbeddingStream; hop: number }>): Promise<void> {
    const input = new Float32Array(MEL_INPUT);
    const per = MELS_PER_HOP * MEL_BINS;
    for (const j of jobs) {
      j.stream.melInput(j.hop, input);
      const out = await this.mel.run({ [this.mel.inputNames[0]!]: new ort.Tensor('float32', input, [1, MEL_INPUT]) });
      const data = out[this.mel.outputNames[0]!]!.data as Float32Array;
      if (data.length !== per)
        throw new VenusError('model_step_failed', `melspectrogram gave ${data.length} values for one hop`);
      const mel = new Float32Array(per);
      for (let i = 0; i < per; i++) mel[i] = data[i]! / 10 + 2;
      j.stream.mels.set(j.hop, mel);
    }
  }

  private async runEmbeddings(jobs: Array<{ stream: EmbeddingStream; hop: number }>): Promise<void> {
    const per = WINDOW_FRAMES * MEL_BINS;
    for (let start = 0; start < jobs.length; start += this.maxBatch) {
      const part = jobs.slice(start, start + this.maxBatch);
      const input = new Float32Array(part.length * per);
      for (const [b, j] of part.entries()) j.stream.window(j.hop, input.subarray(b * per, (b + 1) * per));
      const out = await this.embedding.run({
        [this.embedding.inputNames[0]!]: new ort.Tensor('float32', input, [part.length, WINDOW_FRAMES, MEL_BINS, 1]),
      });
      const data = out[this.embedding.outputNames[0]!]!.data as Float32Array;
      part.forEach((j, b) => {
        j.stream.embeddings.set(j.hop, data.slice(b * EMBEDDING_DIM, (b + 1) * EMBEDDING_DIM));
      });
    }
  }
}
