import * as ort from 'onnxruntime-node';
import type { BundleManifest } from '../bundle-manifest.ts';
import { floatOutput, openGraph, type ProviderOptions } from '../execution-provider.ts';

type AudioEncoderManifest = NonNullable<BundleManifest['components']['audio_encoder']>;

export interface EncodedAudio {
  /** `frames * hiddenSize` embeddings. */
  embeds: Float32Array;
  /** One speech probability per frame, when the graph provides one. */
  speech: Float32Array | null;
}

/**
 * The bundle's `audio_encoder` graph: fixed-size frames of 16 kHz PCM -> one embedding per frame.
 * The frames of every session in a step run as one batch; the frame buffer is reused between runs.
 *
 * @example
 *   const encoder = await AudioEncoder.open(path, manifest, { executionProvider: 'cpu' });
 *   const { embeds, speech } = await encoder.encode(frames, 4); // frames: 4 * frameSamples floats
 */
export class AudioEncoder {
  private buffer: Float32Array;

  private constructor(
    private readonly session: ort.InferenceSession,
    private readonly spec: AudioEncoderManifest,
    readonly hidden: number,
  ) {
    this.buffer = new Float32Array(spec.frameSamples * 16);
  }

  static async open(path: string, manifest: BundleManifest, provider: ProviderOptions): Promise<AudioEncoder> {
    const spec = manifest.components.audio_encoder;
    if (!spec) throw new Error('the bundle has no audio encoder');
    return new AudioEncoder(await openGraph(path, provider), spec, manifest.hiddenSize);
  }

  get frameSamples(): number {
    return this.spec.frameSamples;
  }

  /** Frame duration in ms at 16 kHz. */
  get frameMs(): number {
    return this.spec.frameSamples / 16;
  }

  /** Frames to encode, concatenated; gives the buffer to fill (`count * frameSamples` floats). */
  frames(count: number): Float32Array {
    const size = count * this.spec.frameSamples;
    if (this.buffer.length < size) this.buffer = new Float32Array(Math.max(size, 2 * this.buffer.length));
    return this.buffer.subarray(0, size);
  }

  /** Encodes the first `count` frames of the buffer `frames(count)` returned. */
  async encode(count: number): Promise<EncodedAudio> {
    if (count === 0) return { embeds: new Float32Array(0), speech: null };
    const pcm = new ort.Tensor('float32', this.frames(count), [count, this.spec.frameSamples]);
    const out = await this.session.run({ [this.spec.inputs.pcm]: pcm });
    const embeds = floatOutput(out, this.spec.outputs.embeds, 'audio_encoder').data as Float32Array;
    const name = this.spec.outputs.speechProbability;
    const speech = name ? (floatOutput(out, name, 'audio_encoder').data as Float32Array) : null;
    return { embeds, speech };
  }

  /** Drops the frame buffer grown by large batches. */
  reset(): void {
    this.buffer = new Float32Array(this.spec.frameSamples * 16);
  }

  release(): Promise<void> {
    return this.session.release();
  }
}
