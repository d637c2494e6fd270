import { VenusError } from '@venus/protocol';
import * as ort from 'onnxruntime-node';
import { type BundleManifest, type DecoderManifest, layerName } from '../bundle-manifest.ts';
import { floatOutput, openGraph, type ProviderOptions } from '../execution-provider.ts';

/**
 * One session's KV cache: per layer, keys and values laid out `[heads, maxContext, headDim]`, of
 * which the first `length` positions are valid; positions keep counting when old ones slide out.
 */
export class KvCache {
  readonly keys: Float32Array[];
  readonly values: Float32Array[];
  length = 0;
  /** Position id of the next input (absolute: never reset by sliding). */
  nextPosition = 0;
  /** Logits after the last cached position, or null before the first run. */
  lastLogits: Float32Array | null = null;

  constructor(readonly spec: DecoderManifest) {
    const size = spec.kvHeads * spec.maxContext * spec.headDim;
    this.keys = Array.from({ length: spec.layers }, () => new Float32Array(size));
    this.values = Array.from({ length: spec.layers }, () => new Float32Array(size));
  }

  reset(): void {
    this.length = 0;
    this.nextPosition = 0;
    this.lastLogits = null;
  }
}

/** New inputs of one session in a batched run: `count` embeddings (`count * hidden` floats). */
export interface DecodeRow {
  cache: KvCache;
  embeds: Float32Array;
  count: number;
}

/**
 * The bundle's causal decoder: one step of the LM over a batch of sessions with their KV caches.
 * `begin` packs the caches into `[batch, heads, past, headDim]` tensors (right-padded, masked) and
 * runs the new inputs; each `next` feeds one token per row still generating, reusing the previous
 * run's present tensors as the past, so a cache is copied in once and out once per chunk.
 *
 * @example
 *   const batch = await decoder.begin([{ cache, embeds, count: 3 }]);
 *   const token = argmax(batch.logits(0));
 *   await batch.next([await embedder.embed([token])]);
 *   batch.commit(); // valid positions back into each cache, oldest sliding out
 */
export class CausalDecoder {
  private constructor(
    private readonly session: ort.InferenceSession,
    readonly spec: DecoderManifest,
    readonly hidden: number,
  ) {}

  static async open(path: string, manifest: BundleManifest, provider: ProviderOptions): Promise<CausalDecoder> {
    return new CausalDecoder(await openGraph(path, provider), manifest.components.decoder, manifest.hiddenSize);
  }

  get maxBatch(): number {
    return this.spec.maxBatch;
  }

  createCache(): KvCache {
    return new KvCache(this.spec);
  }

  async begin(rows: readonly DecodeRow[]): Promise<DecodeBatch> {
    if (rows.length === 0 || rows.length > this.spec.maxBatch)
      throw new VenusError(
        'internal_error',
        `decoder batch of ${rows.length}; the bundle takes 1..${this.spec.maxBatch}`,
      );
    const batch = new DecodeBatch(this, rows);
    await batch.start();
    return batch;
  }

  /** @internal one decoder run. */
  async run(feeds: Record<string, ort.Tensor>): Promise<ort.InferenceSession.ReturnType> {
    return this.session.run(feeds);
  }

  /** Per-session state lives in KvCache; the decoder keeps no buffers between batches. */
  reset(): void {}

  release(): Promise<void> {
    return this.session.release();
  }
}

/** Contiguous runs of valid positions in a row of the batch's growing mask. */
type Runs = Array<[start: number, end: number]>;

/**
 * One batched decode: the rows' caches packed into the decoder's past tensors, then grown one
 * token at a time. A row that stops generating is written back to its cache at once and dropped
 * from the tensors, so later tokens only cost the sessions still speaking.
 */
export class DecodeBatch {
  private past: ort.Tensor[] = [];
  private total = 0;
  /** Row index (into `rows`) of each batch entry of the current tensors. */
  private members: number[];
  private readonly valid: Runs[];
  private readonly positions: number[];
  private readonly lastLogits: Array<Float32Array | null>;

  constructor(
    private readonly decoder: CausalDecoder,
    private readonly rows: readonly DecodeRow[],
  ) {
    this.members = rows.map((_, i) => i);
    this.valid = rows.map(() => []);
    this.positions = rows.map((r) => r.cache.nextPosition);
    this.lastLogits = rows.map((r) => r.cache.lastLogits);
  }

  get size(): number {
    return this.rows.length;
  }

  /** Logits after row `i`'s last input (null: that session has no context yet). */
  logits(i: number): Float32Array | null {
    return this.lastLogits[i] ?? null;
  }

  /** @internal packs the caches and runs the rows' new inputs. */
  async start(): Promise<void> {
    const { spec, hidden } = this.decoder;
    const { kvHeads: heads, headDim, layers } = spec;
    const batch = this.rows.length;
    const pastLen = Math.max(...this.rows.map((r) => r.cache.length));
    const seq = Math.max(1, ...this.rows.map((r) => r.count));
    const feeds: Record<string, ort.Tensor> = {};
    for (let l = 0; l < layers; l++) {
      for (const [kind, pattern] of [
        ['keys', spec.inputs.pastKey],
        ['values', spec.inputs.pastValue],
      ] as const) {
        const data = new Float32Array(batch * heads * pastLen * headDim);
        this.rows.forEach((r, b) => {
          const src = r.cache[kind][l]!;
          const len = r.cache.length * headDim;
          for (let h = 0; h < heads; h++) {
            const from = h * spec.maxContext * headDim;
            data.set(src.subarray(from, from + len), (b * heads + h) * pastLen * headDim);
          }
        });
        feeds[layerName(pattern, l)] = new ort.Tensor('float32', data, [batch, heads, pastLen, headDim]);
      }
    }
    const embeds = new Float32Array(batch * seq * hidden);
    const mask = new BigInt64Array(batch * (pastLen + seq));
    const positions = new BigInt64Array(batch * seq);
    this.rows.forEach((r, b) => {
      embeds.set(r.embeds.subarray(0, r.count * hidden), b * seq * hidden);
      mask.fill(1n, b * (pastLen + seq), b * (pastLen + seq) + r.cache.length);
      mask.fill(1n, b * (pastLen + seq) + pastLen, b * (pastLen + seq) + pastLen + r.count);
      for (let t = 0; t < seq; t++) positions[b * seq + t] = BigInt(this.positions[b]! + Math.min(t, r.count));
      if (r.cache.length > 0) this.valid[b]!.push([0, r.cache.length]);
      if (r.count > 0) this.valid[b]!.push([pastLen, pastLen + r.count]);
      this.positions[b] = this.positions[b]! + r.count;
    });
    this.total = pastLen;
    await this.forward(feeds, embeds, mask, positions, seq, (b) => this.rows[b]!.count);
  }

  /**
   * Feeds one token embedding (`hidden` floats) per row still generating; null marks a row done:
   * it is written back to its cache now and leaves the batch.
   */
  async next(embeddings: ReadonlyArray<Float32Array | null>): Promise<void> {
    const done = this.members.filter((row) => !embeddings[row]);
    if (done.length > 0) this.retire(new Set(done));
    if (this.members.length === 0) return;
    const { spec, hidden } = this.decoder;
    const batch = this.members.length;
    const width = this.total + 1;
    const embeds = new Float32Array(batch * hidden);
    const mask = new BigInt64Array(batch * width);
    const positions = new BigInt64Array(batch);
    const feeds: Record<string, ort.Tensor> = {};
    for (let l = 0; l < spec.layers; l++) {
      feeds[layerName(spec.inputs.pastKey, l)] = this.past[2 * l]!;
      feeds[layerName(spec.inputs.pastValue, l)] = this.past[2 * l + 1]!;
    }
    this.members.forEach((row, b) => {
      const runs = this.valid[row]!;
      for (const [start, end] of runs) mask.fill(1n, b * width + start, b * width + end);
      mask[b * width + this.total] = 1n;
      positions[b] = BigInt(this.positions[row]!);
      embeds.set(embeddings[row]!.subarray(0, hidden), b * hidden);
      const last = runs.at(-1);
      if (last && last[1] === this.total) last[1] += 1;
      else runs.push([this.total, this.total + 1]);
      this.positions[row] = this.positions[row]! + 1;
    });
    await this.forward(feeds, embeds, mask, positions, 1, () => 1);
  }

  /** Writes every remaining row back into its cache; the oldest positions slide out past maxContext. */
  commit(): void {
    if (this.members.length > 0) this.retire(new Set(this.members));
  }

  /** Writes `rows` back to their caches and keeps only the other rows in the past tensors. */
  private retire(rows: ReadonlySet<number>): void {
    this.members.forEach((row, b) => {
      if (rows.has(row)) this.writeBack(row, b);
    });
    const keep = this.members.flatMap((row, b) => (rows.has(row) ? [] : [b]));
    if (keep.length > 0 && keep.length < this.members.length) {
      const { kvHeads: heads, headDim } = this.decoder.spec;
      const block = heads * this.total * headDim;
      this.past = this.past.map((t) => {
        const src = t.data as Float32Array;
        const data = new Float32Array(keep.length * block);
        keep.forEach((b, k) => {
          data.set(src.subarray(b * block, (b + 1) * block), k * block);
        });
        return new ort.Tensor('float32', data, [keep.length, heads, this.total, headDim]);
      });
    }
    this.members = keep.map((b) => this.members[b]!);
  }

  private writeBack(row: number, b: number): void {
    const { kvHeads: heads, headDim, layers, maxContext } = this.decoder.spec;
    const cache = this.rows[row]!.cache;
    let keep = this.valid[row]!.reduce((n, [s, e]) => n + e - s, 0);
    let skip = Math.max(0, keep - maxContext);
    keep -= skip;
    const runs: Runs = [];
    for (const [s, e] of this.valid[row]!) {
      const drop = Math.min(skip, e - s);
      skip -= drop;
      if (s + drop < e) runs.push([s + drop, e]);
    }
    for (let l = 0; l < layers; l++) {
      for (const [kind, tensor] of [
        ['keys', this.past[2 * l]!],
        ['values', this.past[2 * l + 1]!],
      ] as const) {
        const src = tensor.data as Float32Array;
        const dst = cache[kind][l]!;
        for (let h = 0; h < heads; h++) {
          let at = h * maxContext * headDim;
          const base = (b * heads + h) * this.total * headDim;
          for (const [s, e] of runs) {
            dst.set(src.subarray(base + s * headDim, base + e * headDim), at);
            at += (e - s) * headDim;
          }
        }
      }
    }
    cache.length = keep;
    cache.nextPosition = this.positions[row]!;
    cache.lastLogits = this.lastLogits[row] ?? null;
  }

  private async forward(
    feeds: Record<string, ort.Tensor>,
    embeds: Float32Array,
    mask: BigInt64Array,
    positions: BigInt64Array,
    seq: number,
    fed: (row: number) => number,
  ): Promise<void> {
    const { spec, hidden } = this.decoder;
    const batch = this.members.length;
    feeds[spec.inputs.embeds] = new ort.Tensor('float32', embeds, [batch, seq, hidden]);
    feeds[spec.inputs.attentionMask] = new ort.Tensor('int64', mask, [batch, this.total + seq]);
    if (spec.inputs.positionIds) feeds[spec.inputs.positionIds] = new ort.Tensor('int64', positions, [batch, seq]);
    const out = await this.decoder.run(feeds);
    this.past = [];
    for (let l = 0; l < spec.layers; l++) {
      this.past.push(floatOutput(out, layerName(spec.outputs.presentKey, l), 'decoder'));
      this.past.push(floatOutput(out, layerName(spec.outputs.presentValue, l), 'decoder'));
    }
    this.total += seq;
    const logits = floatOutput(out, spec.outputs.logits, 'decoder');
    const vocab = logits.dims[2] ?? 0;
    const data = logits.data as Float32Array;
    this.members.forEach((row, b) => {
      const n = fed(row);
      if (n === 0) return;
      const at = (b * seq + n - 1) * vocab;
      this.lastLogits[row] = data.slice(at, at + vocab);
    });
  }
}

/** Index of the largest logit (greedy decoding). */
export function argmax(logits: Float32Array): number {
  let best = 0;
  for (let i = 1; i < logits.length; i++) if (logits[i]! > logits[best]!) best = i;
  return best;
}
