import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMBEDDING_OFFSET, FEATURE_COUNT, fillEmbeddings, OverlapFeatureTracker } from './overlap-features.ts';
import { EMBEDDING_DIM, EmbeddingStream, HOP_SAMPLES, SpeechEmbedding } from './speech-embedding.ts';
import type { Burst } from './voice-activity.ts';

/** A deterministic speech-like signal: a gliding harmonic tone with a syllable envelope, and a seeded hiss. */
function signal(samples: number, seed: number): Float32Array {
  let s = seed;
  const noise = () => {
    s = (s * 1_103_515_245 + 12_345) % 2 ** 31;
    return s / 2 ** 30 - 1;
  };
  const x = new Float32Array(samples);
  let phase = 0;
  for (let i = 0; i < samples; i++) {
    const t = i / 16_000;
    phase += (2 * Math.PI * (140 + 40 * Math.sin(2 * Math.PI * 1.3 * t))) / 16_000;
    const env = 0.5 + 0.5 * Math.sin(2 * Math.PI * 4 * t);
    let v = 0;
    for (let h = 1; h <= 6; h++) v += Math.sin(h * phase) / h;
    x[i] = 0.1 * env * v + 0.003 * noise();
  }
  return x;
}

function pushIn(stream: EmbeddingStream, x: Float32Array, piece: number): void {
  for (let at = 0; at < x.length; at += piece) stream.push(x.subarray(at, Math.min(x.length, at + piece)));
}

describe('SpeechEmbedding (the real melspectrogram and embedding models)', () => {
  let model: SpeechEmbedding;
  beforeAll(async () => {
    model = await SpeechEmbedding.create({ maxBatch: 4 });
  });
  afterAll(async () => {
    await model.close();
  });

  it('gives one 96-d embedding per 80 ms hop, the same whatever pieces the audio came in', async () => {
    const x = signal(16_000 * 2, 7);
    const small = new EmbeddingStream();
    const large = new EmbeddingStream();
    pushIn(small, x, 512);
    pushIn(large, x, 16_000);
    expect(small.latestHop()).toBe(Math.floor(x.length / HOP_SAMPLES) - 1);
    const hops = [5, 12, small.latestHop()];
    const [a, b] = await model.embed([
      { stream: small, hops },
      { stream: large, hops },
    ]);
    for (let i = 0; i < hops.length; i++) {
      expect(a![i]).toHaveLength(EMBEDDING_DIM);
      expect(Array.from(a![i]!)).toEqual(Array.from(b![i]!));
      expect(a![i]!.every(Number.isFinite)).toBe(true);
    }
    // Speech-like audio and silence give different embeddings.
    const quiet = new EmbeddingStream();
    quiet.push(new Float32Array(x.length));
    const silent = (await model.embed([{ stream: quiet, hops: [quiet.latestHop()] }]))[0]![0]!;
    const distance = Math.hypot(...Array.from(silent, (v, k) => v - a![2]![k]!));
    expect(distance).toBeGreaterThan(1);
  });

  it('answers a batch of streams as it answers each alone', async () => {
    const streams = [1, 2, 3].map((seed) => {
      const s = new EmbeddingStream();
      s.push(signal(16_000, seed));
      return s;
    });
    const together = await model.embed(streams.map((stream) => ({ stream, hops: [stream.latestHop()] })));
    for (const [i, seed] of [1, 2, 3].entries()) {
      const alone = new EmbeddingStream();
      alone.push(signal(16_000, seed));
      const e = (await model.embed([{ stream: alone, hops: [alone.latestHop()] }]))[0]![0]!;
      const diff = Math.max(...Array.from(e, (v, k) => Math.abs(v - together[i]![0]![k]!)));
      expect(diff).toBeLessThan(1e-3);
    }
  });

  it("fills an overlap row's embedding part: the newest hop's embedding and the mean over its burst", async () => {
    const tracker = new OverlapFeatureTracker();
    const burst: Burst = { speechMs: 64, levelDb: -30, overlapped: true, judged: false };
    const x = signal(16_000, 3);
    const rows = [];
    for (let at = 0; at + 512 <= x.length; at += 512) {
      const row = tracker.frame(x.subarray(at, at + 512), 0.9, at >= 8192 ? burst : null, false, NO_WORDS, -26);
      if (row) rows.push(row);
    }
    expect(rows.length).toBeGreaterThan(2);
    await fillEmbeddings(rows, model);
    const last = rows.at(-1)!;
    expect(last.features).toHaveLength(FEATURE_COUNT);
    const hops = last.embedding.hops;
    expect(hops.at(-1)).toBe(tracker.audio.latestHop());
    // The burst began at sample 8192 - 512 (its onset frame): its first hop holds that sample.
    expect(hops[0]).toBe(Math.floor((8192 - 512) / HOP_SAMPLES));
    const [each] = await model.embed([{ stream: tracker.audio, hops }]);
    const current = last.features.subarray(EMBEDDING_OFFSET, EMBEDDING_OFFSET + EMBEDDING_DIM);
    const mean = last.features.subarray(EMBEDDING_OFFSET + EMBEDDING_DIM, EMBEDDING_OFFSET + 2 * EMBEDDING_DIM);
    expect(Array.from(current)).toEqual(Array.from(each!.at(-1)!));
    for (let k = 0; k < EMBEDDING_DIM; k++)
      expect(mean[k]).toBeCloseTo(each!.reduce((sum, e) => sum + e[k]!, 0) / each!.length, 4);
  });
});

const NO_WORDS = { text: '', score: Number.NaN };
