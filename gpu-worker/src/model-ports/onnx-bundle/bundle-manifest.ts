import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { VenusError } from '@venus/protocol';
import { z } from 'zod';

/**
 * `bundle.json`: what a directory of ONNX files must declare to be served by the OnnxBundleModelPort.
 * Tensor names are given per component so that exports from different toolchains (optimum,
 * transformers.js-style splits, hand-written graphs) fit without renaming. KV-cache names carry a
 * `{layer}` placeholder.
 *
 * Layouts the host assumes: token embeddings `[batch, seq, hidden]`; audio encoder input
 * `[frames, frameSamples]` float PCM in [-1, 1] -> `[frames, hidden]` (+ optional `[frames]` speech
 * probability); decoder `inputs_embeds [batch, seq, hidden]`, `attention_mask [batch, past+seq]`
 * (int64), optional `position_ids [batch, seq]` (int64), past/present KV `[batch, heads, len, headDim]`,
 * `logits [batch, seq, vocab]`; speech head token ids `[n]` (int64) -> `[n, samplesPerToken]` float
 * PCM at 24 kHz.
 */
const TensorName = z.string().min(1);
const LayerPattern = z.string().includes('{layer}');

const EmbedTokensSchema = z.object({
  file: z.string().min(1),
  inputs: z.object({ ids: TensorName }),
  outputs: z.object({ embeds: TensorName }),
});

const AudioEncoderSchema = z.object({
  file: z.string().min(1),
  /** Raw 16 kHz PCM frames. Feature inputs (log-mel) are a planned second kind. */
  input: z.literal('pcm16k'),
  frameSamples: z.number().int().positive(),
  inputs: z.object({ pcm: TensorName }),
  outputs: z.object({ embeds: TensorName, speechProbability: TensorName.optional() }),
});

const DecoderSchema = z.object({
  file: z.string().min(1),
  layers: z.number().int().positive(),
  kvHeads: z.number().int().positive(),
  headDim: z.number().int().positive(),
  /** Largest batch the export accepts; 1 for an export with a fixed batch dimension. */
  maxBatch: z.number().int().positive(),
  /** KV positions kept per session; older ones slide out. */
  maxContext: z.number().int().positive(),
  inputs: z.object({
    embeds: TensorName,
    attentionMask: TensorName,
    positionIds: TensorName.optional(),
    pastKey: LayerPattern,
    pastValue: LayerPattern,
  }),
  outputs: z.object({ logits: TensorName, presentKey: LayerPattern, presentValue: LayerPattern }),
});

const SpeechHeadSchema = z.object({
  file: z.string().min(1),
  /** Direct 24 kHz PCM per token. Codec codes (e.g. S3 tokens plus a vocoder) are a planned second kind. */
  output: z.literal('pcm24k'),
  samplesPerToken: z.number().int().positive(),
  inputs: z.object({ ids: TensorName }),
  outputs: z.object({ pcm: TensorName }),
});

export const BundleManifestSchema = z.object({
  format: z.literal('venus-onnx-bundle/1'),
  name: z.string().min(1),
  revision: z.string().min(1),
  licence: z.object({ spdx: z.string().min(1), notice: z.string().optional() }),
  hiddenSize: z.number().int().positive(),
  tokenizer: z.string().min(1),
  specialTokens: z
    .object({
      listen: z.string().min(1),
      speak: z.string().min(1),
      turn_eos: z.string().min(1),
      delegate_open: z.string().min(1),
      delegate_close: z.string().min(1),
      backend_open: z.string().min(1),
      backend_close: z.string().min(1),
    })
    .catchall(z.string().min(1)),
  /** How inputs enter the context; `{text}` is replaced. */
  templates: z
    .object({
      userText: z.string().includes('{text}').default('{text}'),
      prefillSpeak: z.string().includes('{text}').default('{text}'),
      prefillSilent: z.string().includes('{text}').default('{text}'),
    })
    .prefault({}),
  components: z.object({
    embed_tokens: EmbedTokensSchema,
    audio_encoder: AudioEncoderSchema.optional(),
    decoder: DecoderSchema,
    speech_head: SpeechHeadSchema.optional(),
  }),
  decoding: z
    .object({
      /** Greedy tokens per chunk at most; `<|listen|>` and `<|turn_eos|>` end a chunk early. */
      maxTokensPerChunk: z.number().int().positive().default(8),
      /** Chunk period the bundle was made for (paces speech output). */
      chunkMs: z.number().int().positive().default(160),
    })
    .prefault({}),
});

export type BundleManifest = z.infer<typeof BundleManifestSchema>;
export type DecoderManifest = z.infer<typeof DecoderSchema>;

/** A validated manifest and the absolute paths of its files. */
export interface LoadedBundle {
  dir: string;
  manifest: BundleManifest;
  paths: { tokenizer: string; embedTokens: string; audioEncoder?: string; decoder: string; speechHead?: string };
}

export function layerName(pattern: string, layer: number): string {
  return pattern.replaceAll('{layer}', String(layer));
}

/**
 * Reads and validates `<dir>/bundle.json`.
 *
 * @example
 *   const bundle = await loadBundle('gpu-worker/models/tiny-bundle');
 *   bundle.manifest.components.decoder.layers; // 2
 */
export async function loadBundle(dir: string): Promise<LoadedBundle> {
  const root = resolve(dir);
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(join(root, 'bundle.json'), 'utf8'));
  } catch (err) {
    throw new VenusError('model_unavailable', `cannot read ${join(root, 'bundle.json')}: ${String(err)}`, {
      cause: err,
      retryable: false,
    });
  }
  const parsed = BundleManifestSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new VenusError(
      'model_unavailable',
      `invalid bundle.json at ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'malformed'}`,
      { retryable: false },
    );
  }
  const m = parsed.data;
  const at = (file: string) => join(root, file);
  return {
    dir: root,
    manifest: m,
    paths: {
      tokenizer: at(m.tokenizer),
      embedTokens: at(m.components.embed_tokens.file),
      decoder: at(m.components.decoder.file),
      ...(m.components.audio_encoder ? { audioEncoder: at(m.components.audio_encoder.file) } : {}),
      ...(m.components.speech_head ? { speechHead: at(m.components.speech_head.file) } : {}),
    },
  };
}
