import * as ort from 'onnxruntime-node';
import type { BundleManifest } from '../bundle-manifest.ts';
import { floatOutput, openGraph, type ProviderOptions } from '../execution-provider.ts';

/**
 * The bundle's `embed_tokens` graph: token ids -> input embeddings. Every token a step needs, from
 * every session in the batch, goes through one run as a single `[1, n]` row.
 *
 * @example
 *   const embedder = await TokenEmbedder.open(path, manifest, { executionProvider: 'cpu' });
 *   const embeds = await embedder.embed([12, 40, 7]); // 3 * hiddenSize floats
 */
export class TokenEmbedder {
  private ids = new BigInt64Array(64);

  private constructor(
    private readonly session: ort.InferenceSession,
    private readonly names: BundleManifest['components']['embed_tokens'],
    readonly hidden: number,
  ) {}

  static async open(path: string, manifest: BundleManifest, provider: ProviderOptions): Promise<TokenEmbedder> {
    return new TokenEmbedder(await openGraph(path, provider), manifest.components.embed_tokens, manifest.hiddenSize);
  }

  async embed(ids: readonly number[]): Promise<Float32Array> {
    if (ids.length === 0) return new Float32Array(0);
    if (this.ids.length < ids.length) this.ids = new BigInt64Array(Math.max(ids.length, 2 * this.ids.length));
    for (let i = 0; i < ids.length; i++) this.ids[i] = BigInt(ids[i]!);
    const input = new ort.Tensor('int64', this.ids.subarray(0, ids.length), [1, ids.length]);
    const out = await this.session.run({ [this.names.inputs.ids]: input });
    return floatOutput(out, this.names.outputs.embeds, 'embed_tokens').data as Float32Array;
  }

  /** Drops the id buffer grown by large batches. */
  reset(): void {
    this.ids = new BigInt64Array(64);
  }

  release(): Promise<void> {
    return this.session.release();
  }
}
