import { fileURLToPath } from 'node:url';
import { VenusError } from '@venus/protocol';
import * as ort from 'onnxruntime-node';

export const VAD_FRAME_SAMPLES = 512;
export const VAD_CONTEXT_SAMPLES = 64;
export const VAD_FRAME_MS = 32;
const INPUT_SAMPLES = VAD_FRAME_SAMPLES + VAD_CONTEXT_SAMPLES;
const STATE_SIZE = 128;

export const SILERO_VAD_MODEL_PATH = fileURLToPath(new URL('../../models/silero_vad_v5.onnx', import.meta.url));

export interface SileroVadOptions {
  modelPath?: string;
  /** Largest batch one run takes; bigger requests are split. Default 64. */
  maxBatch?: number;
  intraOpNumThreads?: number;
}

/**
 * One audio stream's recurrent state for Silero VAD: the model's [2, 128] state and the last 64
 * samples of the previous frame, which the model needs as left context (without it, scores smear).
 * Every session owns one, so sessions never share state even when their frames run in one batch.
 */
export class VadStream {
  readonly state = new Float32Array(2 * STATE_SIZE);
  readonly context = new Float32Array(VAD_CONTEXT_SAMPLES);

  reset(): void {
    this.state.fill(0);
    this.context.fill(0);
  }
}

/**
 * Silero VAD v5 through onnxruntime-node: owns the InferenceSession (one intra-op thread, sequential
 * execution) and preallocated batch buffers. `run` takes one 512-sample 16 kHz frame for each of
 * several streams and evaluates them as one batch ([B, 576] input, [2, B, 128] state), which costs
 * about a third per frame of running them one by one. Runs are serialised because the buffers are shared.
 *
 * @example
 *   const vad = await SileroVad.create();
 *   const stream = vad.createStream();
 *   const probs = await vad.detect(samples16k, stream); // one probability per 32 ms frame
 */
export class SileroVad {
  private readonly input: Float32Array;
  private readonly stateIn: Float32Array;
  private readonly sr = new ort.Tensor('int64', BigInt64Array.from([16_000n]), []);
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  private constructor(
    private readonly session: ort.InferenceSession,
    readonly maxBatch: number,
  ) {
    this.input = new Float32Array(maxBatch * INPUT_SAMPLES);
    this.stateIn = new Float32Array(maxBatch * 2 * STATE_SIZE);
  }

  static async create(options: SileroVadOptions = {}): Promise<SileroVad> {
    const session = await ort.InferenceSession.create(options.modelPath ?? SILERO_VAD_MODEL_PATH, {
      intraOpNumThreads: options.intraOpNumThreads ?? 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
    });
    return new SileroVad(session, Math.max(1, options.maxBatch ?? 64));
  }

  createStream(): VadStream {
    return new VadStream();
  }

  /** Clears a stream's state, e.g. when its session restarts. */
  reset(stream: VadStream): void {
    stream.reset();
  }

  /** Speech probability of one frame per stream, advancing each stream's state and context. */
  run(streams: readonly VadStream[], frames: readonly Float32Array[]): Promise<Float32Array> {
    if (streams.length !== frames.length) throw new VenusError('internal_error', 'one frame per stream');
    const result = this.queue.then(() => this.runAll(streams, frames));
    this.queue = result.catch(() => undefined);
    return result;
  }

  /** Per-frame probabilities of a whole signal (float samples at 16 kHz); the tail under one frame is ignored. */
  async detect(samples: Float32Array, stream = this.createStream()): Promise<Float32Array> {
    const count = Math.floor(samples.length / VAD_FRAME_SAMPLES);
    const out = new Float32Array(count);
    for (let i = 0; i < count; i++) {
      const frame = samples.subarray(i * VAD_FRAME_SAMPLES, (i + 1) * VAD_FRAME_SAMPLES);
      out[i] = (await this.run([stream], [frame]))[0] ?? 0;
    }
    return out;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue;
    await this.session.release();
  }

  private async runAll(streams: readonly VadStream[], frames: readonly Float32Array[]): Promise<Float32Array> {
    const out = new Float32Array(streams.length);
    for (let start = 0; start < streams.length; start += this.maxBatch) {
      const end = Math.min(streams.length, start + this.maxBatch);
      out.set(await this.runBatch(streams.slice(start, end), frames.slice(start, end)), start);
    }
    return out;
  }

  private async runBatch(streams: readonly VadStream[], frames: readonly Float32Array[]): Promise<Float32Array> {
    if (this.closed) throw new VenusError('model_unavailable', 'voice activity model is closed');
    const batch = streams.length;
    for (let b = 0; b < batch; b++) {
      const stream = streams[b]!;
      const frame = frames[b]!;
      if (frame.length !== VAD_FRAME_SAMPLES) {
        throw new VenusError(
          'audio_wrong_format',
          `VAD frame of ${frame.length} samples; expected ${VAD_FRAME_SAMPLES}`,
        );
      }
      const at = b * INPUT_SAMPLES;
      this.input.set(stream.context, at);
      this.input.set(frame, at + VAD_CONTEXT_SAMPLES);
      // State layout [2, B, 128]: the stream's two halves go to row b of each of the two planes.
      this.stateIn.set(stream.state.subarray(0, STATE_SIZE), b * STATE_SIZE);
      this.stateIn.set(stream.state.subarray(STATE_SIZE), (batch + b) * STATE_SIZE);
      stream.context.set(frame.subarray(VAD_FRAME_SAMPLES - VAD_CONTEXT_SAMPLES));
    }
    const results = await this.session.run({
      input: new ort.Tensor('float32', this.input.subarray(0, batch * INPUT_SAMPLES), [batch, INPUT_SAMPLES]),
      state: new ort.Tensor('float32', this.stateIn.subarray(0, batch * 2 * STATE_SIZE), [2, batch, STATE_SIZE]),
      sr: this.sr,
    });
    const probs = results.output?.data as Float32Array | undefined;
    const stateN = results.stateN?.data as Float32Array | undefined;
    if (!probs || !stateN) throw new VenusError('model_step_failed', 'Silero VAD returned no output');
    for (let b = 0; b < batch; b++) {
      const stream = streams[b]!;
      stream.state.set(stateN.subarray(b * STATE_SIZE, (b + 1) * STATE_SIZE), 0);
      stream.state.set(stateN.subarray((batch + b) * STATE_SIZE, (batch + b + 1) * STATE_SIZE), STATE_SIZE);
    }
    return probs.slice(0, batch);
  }
}
