import * as ort from 'onnxruntime-node';
import type { BundleManifest } from '../bundle-manifest.ts';
import { floatOutput, openGraph, type ProviderOptions } from '../execution-provider.ts';

/** Embeddings kept per token id; an embedding depends on the id alone. */
const MEMO_LIMIT = 8192;

/**
 * The bundle's `embed_tokens` graph: token ids -> input embeddings. Embeddings are memoised by id
 * (a chunk's generated tokens are mostly ones seen before), and the ids a step still needs, from
 * every session in the batch, go through one run as a single `[1, n]` row.
 *
 * @example
 *   const embedder = await TokenEmbedder.open(path, manifest, { executionProvider: 'cpu' });
 *   const embeds = await embedder.embed([12, 40, 7]); // 3 * hiddenSize floats
 */
export class TokenEmbedder {
  private ids = new BigInt64Array(64);
  private memo = new Map<number, Float32Array>();

  private constructor(
    private readonly session: ort.InferenceSession,
    private readonly names: BundleManifest['components']['embed_tokens'],
    readonly hidden: number,
  ) {}

  static async open(path: string, manifest: BundleManifest, provider: ProviderOptions): Promise<TokenEmbedder> {
    return new TokenEmbedder(await openGraph(path, provider), manifest.components.embed_tokens, manifest.hiddenSize);
  }

  async embed(ids: readonly number[]): Promise<Float32Array> {
    const out = new Float32Array(ids.length * this.hidden);
    const missing = [...new Set(ids.filter((id) => !this.memo.has(id)))];
    if (missing.length > 0) {
      const fresh = await this.run(missing);
      if (this.memo.size + missing.length > MEMO_LIMIT) this.memo.clear();
      missing.forEach((id, i) => {
        this.memo.set(id, fresh.slice(i * this.hidden, (i + 1) * this.hidden));
      });
    }
    ids.forEach((id, i) => {
      out.set(this.memo.get(id)!, i * this.hidden);
    });
    return out;
  }

  /** Drops the memo and the id buffer grown by large batches. */
  reset(): void {
    this.ids = new BigInt64Array(64);
    this.memo = new Map();
  }

  release(): Promise<void> {
    return this.session.release();
  }

  private async run(ids: readonly number[]): Promise<Float32Array> {
    if (this.ids.length < ids.length) this.ids = new BigInt64Array(Math.max(ids.length, 2 * this.ids.length));
    for (let i = 0; i < ids.length; i++) this.ids[i] = BigInt(ids[i]!);
    const input = new ort.Tensor('int64', this.ids.subarray(0, ids.length), [1, ids.length]);
    const out = await this.session.run({ [this.names.inputs.ids]: input });
    return floatOutput(out, this.names.outputs.embeds, 'embed_tokens').data as Float32Array;
  }
}
