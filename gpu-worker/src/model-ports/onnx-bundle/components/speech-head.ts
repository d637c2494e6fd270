import * as ort from 'onnxruntime-node';
import type { BundleManifest } from '../bundle-manifest.ts';
import { floatOutput, openGraph, type ProviderOptions } from '../execution-provider.ts';

type SpeechHeadManifest = NonNullable<BundleManifest['components']['speech_head']>;

/**
 * The bundle's `speech_head` graph: spoken token ids -> 24 kHz PCM, `samplesPerToken` samples each.
 * The spoken tokens of every session in a step run as one batch.
 *
 * @example
 *   const head = await SpeechHead.open(path, manifest, { executionProvider: 'cpu' });
 *   const pcm = await head.synthesize([101, 102]); // 2 * samplesPerToken floats in [-1, 1]
 */
export class SpeechHead {
  private ids = new BigInt64Array(64);

  private constructor(
    private readonly session: ort.InferenceSession,
    private readonly spec: SpeechHeadManifest,
  ) {}

  static async open(path: string, manifest: BundleManifest, provider: ProviderOptions): Promise<SpeechHead> {
    const spec = manifest.components.speech_head;
    if (!spec) throw new Error('the bundle has no speech head');
    return new SpeechHead(await openGraph(path, provider), spec);
  }

  get samplesPerToken(): number {
    return this.spec.samplesPerToken;
  }

  async synthesize(ids: readonly number[]): Promise<Float32Array> {
    if (ids.length === 0) return new Float32Array(0);
    if (this.ids.length < ids.length) this.ids = new BigInt64Array(Math.max(ids.length, 2 * this.ids.length));
    for (let i = 0; i < ids.length; i++) this.ids[i] = BigInt(ids[i]!);
    const input = new ort.Tensor('int64', this.ids.subarray(0, ids.length), [ids.length]);
    const out = await this.session.run({ [this.spec.inputs.ids]: input });
    return floatOutput(out, this.spec.outputs.pcm, 'speech_head').data as Float32Array;
  }

  /** Drops the id buffer grown by large batches. */
  reset(): void {
    this.ids = new BigInt64Array(64);
  }

  release(): Promise<void> {
    return this.session.release();
  }
}
