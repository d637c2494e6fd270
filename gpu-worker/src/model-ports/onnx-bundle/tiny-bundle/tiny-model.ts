/**
 * The tiny bundle's four ONNX graphs, with weights set by construction rather than trained, so
 * that its behaviour is exact and explainable in a test:
 *
 * - `audio_encoder`: 80 ms of 16 kHz PCM -> one embedding; a voiced frame (energy above about
 *   -40 dBFS) carries the "user spoke" feature; also returns a speech probability.
 * - `embed_tokens`: token id -> embedding (one-hot features: constant, trigger/span flags, identity).
 * - `decoder`: a 2-layer, 3-head causal transformer with a KV cache. Every head's score is
 *   `BIG * member + SLOPE * position`, so it reads the most recent cached position of its kind.
 *   Layer 1 tells whether a position lies inside a `<|user|>…<|end_user|>` or `<backend>…</backend>`
 *   span (so typed or prefilled text never passes for the model's own words). Layer 2 reads the
 *   model's last own token (head A), whether a trigger (user speech, typed text, a spoken prefill)
 *   came after its last `<|speak|>` (head B), and the kind of the latest trigger (head C). Its MLP
 *   decides: continue the current phrase, or start speaking once the user stopped, or listen.
 * - `speech_head`: token id -> 40 ms of 24 kHz voiced tone whose pitch depends on the token.
 *
 * What it says: after user speech or typed text, "Sure, let me look that up<delegate>answer the
 * user's question</delegate> one moment please." and after a spoken `<backend>` result, "Here is
 * what came back." — each closed with `<|turn_eos|>`.
 */

import { encodeModel, GraphBuilder, ONNX_FLOAT, ONNX_INT64 } from './onnx-writer.ts';
import { TINY_SPECIAL_TOKENS, type TinyTokenizer } from './tiny-tokenizer.ts';

export const TINY_USER_REPLY =
  "Sure, let me look that up<delegate>answer the user's question</delegate> one moment please.";
export const TINY_BACKEND_REPLY = 'Here is what came back.';

const USER_PIECES = [
  'Sure',
  ',',
  ' let',
  ' me',
  ' look',
  ' that',
  ' up',
  '<delegate>',
  'answer',
  ' the',
  ' user',
  "'s",
  ' question',
  '</delegate>',
  ' one',
  ' moment',
  ' please',
  '.',
];
const BACKEND_PIECES = ['Here', ' is', ' what', ' came', ' back', '.'];

export const TINY_DIMS = {
  hidden: 96,
  layers: 2,
  heads: 3,
  headDim: 32,
  mlp: 32,
  frameSamples: 1280,
  samplesPerToken: 960,
} as const;

const BIG = 20_000;
const SLOPE = 8;

/** Feature dimensions of the residual stream. */
const F = {
  CONST: 0,
  POS: 1,
  USER_TRIG: 2,
  CUR_VOICE: 3,
  BACKEND_TRIG: 4,
  CONSUMER: 5,
  SPAN_OPEN: 6,
  SPAN_CLOSE: 7,
  IN_SPAN: 8,
  PENDING: 9,
  TYPE_USER: 10,
  TYPE_BACKEND: 11,
  IDLE: 12,
  SPEAK_NOW: 13,
  SAY_USER: 14,
  SAY_BACKEND: 15,
  ID: 16,
} as const;

interface Script {
  /** Token ids the model itself emits (identity features), in a fixed order. */
  own: number[];
  /** Next token after each own token that continues a phrase. */
  next: Map<number, number>;
  special: Record<keyof typeof TINY_SPECIAL_TOKENS, number>;
  sure: number;
  here: number;
}

function script(tk: TinyTokenizer): Script {
  const special = Object.fromEntries(
    Object.entries(TINY_SPECIAL_TOKENS).map(([k, v]) => [k, tk.id(v)]),
  ) as Script['special'];
  const next = new Map<number, number>();
  for (const pieces of [USER_PIECES, BACKEND_PIECES]) {
    const ids = [...pieces.map((p) => tk.id(p)), special.turn_eos];
    for (let i = 0; i + 1 < ids.length; i++) {
      const known = next.get(ids[i]!);
      if (known !== undefined && known !== ids[i + 1]) throw new Error(`"${pieces[i]}" would need two successors`);
      next.set(ids[i]!, ids[i + 1]!);
    }
  }
  const own = [special.listen, special.speak, special.turn_eos, ...new Set(next.keys())];
  if (own.length > TINY_DIMS.headDim || F.ID + 3 * own.length > TINY_DIMS.hidden)
    throw new Error('the tiny script outgrew the model');
  return { own, next, special, sure: tk.id('Sure'), here: tk.id('Here') };
}

const idDim = (s: Script, t: number) => F.ID + s.own.indexOf(t);
const gatedDim = (s: Script, t: number) => F.ID + s.own.length + s.own.indexOf(t);
const ownDim = (s: Script, t: number) => F.ID + 2 * s.own.length + s.own.indexOf(t);

class Matrix {
  readonly data: Float32Array;
  constructor(
    readonly rows: number,
    readonly cols: number,
  ) {
    this.data = new Float32Array(rows * cols);
  }
  set(r: number, c: number, v: number): void {
    this.data[r * this.cols + c] = v;
  }
  add(r: number, c: number, v: number): void {
    this.data[r * this.cols + c] = (this.data[r * this.cols + c] ?? 0) + v;
  }
}

export function buildEmbedTokens(tk: TinyTokenizer): Uint8Array {
  const s = script(tk);
  const { hidden } = TINY_DIMS;
  const table = new Matrix(tk.vocabSize, hidden);
  for (let t = 0; t < tk.vocabSize; t++) table.set(t, F.CONST, 1);
  const sp = s.special;
  table.set(sp.user_close, F.USER_TRIG, 1);
  table.set(sp.backend_close, F.BACKEND_TRIG, 1);
  for (const t of [sp.speak, sp.quiet]) table.set(t, F.CONSUMER, 1);
  for (const t of [sp.user_open, sp.backend_open]) table.set(t, F.SPAN_OPEN, 1);
  for (const t of [sp.user_close, sp.backend_close]) table.set(t, F.SPAN_CLOSE, 1);
  for (const t of s.own) table.set(t, idDim(s, t), 1);
  const g = new GraphBuilder('embed_tokens');
  const ids = g.input('input_ids', ONNX_INT64, ['batch', 'seq']);
  const w = g.floats([tk.vocabSize, hidden], table.data, 'embedding');
  g.output(g.op('Gather', [w, ids], { axis: { int: 0 } }), 'inputs_embeds', ONNX_FLOAT, ['batch', 'seq', hidden]);
  return encodeModel(g.graph, 17, 'Tiny Venus bundle: token embeddings (project-made, Apache-2.0).');
}

export function buildAudioEncoder(): Uint8Array {
  const { hidden, frameSamples } = TINY_DIMS;
  const g = new GraphBuilder('audio_encoder');
  const pcm = g.input('pcm', ONNX_FLOAT, ['frames', frameSamples]);
  const energy = g.op('ReduceMean', [g.op('Mul', [pcm, pcm])], { axes: { ints: [1] }, keepdims: { int: 1 } });
  const logEnergy = g.op('Log', [g.op('Add', [energy, g.floats([], [1e-10])])]);
  // Sigmoid(3 * (ln E - ln 1e-4)): about 0 at -50 dBFS, about 1 at -30 dBFS.
  const p = g.op('Sigmoid', [
    g.op('Mul', [g.op('Sub', [logEnergy, g.floats([], [Math.log(1e-4)])]), g.floats([], [3])]),
  ]);
  const voice = new Float32Array(hidden);
  voice[F.USER_TRIG] = 1;
  voice[F.CUR_VOICE] = 1;
  const base = new Float32Array(hidden);
  base[F.CONST] = 1;
  const embeds = g.op('Add', [g.op('Mul', [p, g.floats([1, hidden], voice)]), g.floats([1, hidden], base)]);
  g.output(embeds, 'embeddings', ONNX_FLOAT, ['frames', hidden]);
  g.output(g.op('Squeeze', [p, g.ints([1], [1])]), 'speech_probability', ONNX_FLOAT, ['frames']);
  return encodeModel(g.graph, 17, 'Tiny Venus bundle: energy-based audio encoder (project-made, Apache-2.0).');
}

export function buildSpeechHead(tk: TinyTokenizer): Uint8Array {
  const { samplesPerToken } = TINY_DIMS;
  const g = new GraphBuilder('speech_head');
  const ids = g.input('token_ids', ONNX_INT64, ['n']);
  const pitch = Float32Array.from({ length: tk.vocabSize }, (_, t) => 110 + (t % 11) * 9);
  const f = g.op('Unsqueeze', [
    g.op('Gather', [g.floats([tk.vocabSize], pitch, 'pitch'), ids], { axis: { int: 0 } }),
    g.ints([1], [1]),
  ]);
  const t = Float32Array.from({ length: samplesPerToken }, (_, n) => (2 * Math.PI * n) / 24_000);
  const phase = g.op('Mul', [f, g.floats([1, samplesPerToken], t, 'time')]);
  let wave = g.op('Sin', [phase]);
  for (const [k, amp] of [
    [2, 0.5],
    [3, 0.3],
    [4, 0.2],
  ] as const)
    wave = g.op('Add', [
      wave,
      g.op('Mul', [g.op('Sin', [g.op('Mul', [phase, g.floats([], [k])])]), g.floats([], [amp])]),
    ]);
  // A raised-cosine envelope keeps token boundaries click-free.
  const env = Float32Array.from(
    { length: samplesPerToken },
    (_, n) => (0.25 / 2) * (1 - Math.cos((2 * Math.PI * n) / samplesPerToken)),
  );
  g.output(g.op('Mul', [wave, g.floats([1, samplesPerToken], env, 'envelope')]), 'pcm', ONNX_FLOAT, [
    'n',
    samplesPerToken,
  ]);
  return encodeModel(g.graph, 17, 'Tiny Venus bundle: tone speech head (project-made, Apache-2.0).');
}

interface LayerWeights {
  q: Matrix;
  k: Matrix;
  v: Matrix;
  o: Matrix;
  w1: Matrix;
  b1: Float32Array;
  w2: Matrix;
}

function emptyLayer(): LayerWeights {
  const { hidden, heads, headDim, mlp } = TINY_DIMS;
  const inner = heads * headDim;
  return {
    q: new Matrix(hidden, inner),
    k: new Matrix(hidden, inner),
    v: new Matrix(hidden, inner),
    o: new Matrix(inner, hidden),
    w1: new Matrix(hidden, mlp),
    b1: new Float32Array(mlp),
    w2: new Matrix(mlp, hidden),
  };
}

/** Head `h` attends to the most recent position whose `members` features are set. */
function recencyHead(l: LayerWeights, h: number, members: number[]): void {
  const col = h * TINY_DIMS.headDim;
  l.q.set(F.CONST, col, 1);
  for (const m of members) l.k.set(m, col, BIG);
  l.k.set(F.POS, col, SLOPE);
}

function decoderWeights(s: Script): { layers: LayerWeights[]; out: Matrix; vocab: number } {
  const { headDim } = TINY_DIMS;
  const vocab = Math.max(...s.own, ...s.next.values(), ...Object.values(s.special)) + 1;
  const continuing = s.own.filter((t) => t !== s.special.listen && t !== s.special.turn_eos);

  // Layer 1: inside a user or backend span? Then gate the identity features by it.
  const l1 = emptyLayer();
  recencyHead(l1, 0, [F.SPAN_OPEN, F.SPAN_CLOSE]);
  l1.v.set(F.SPAN_OPEN, 0, 1);
  l1.o.set(0, F.IN_SPAN, 1);
  s.own.forEach((t, i) => {
    l1.w1.set(idDim(s, t), i, 1);
    l1.w1.set(F.IN_SPAN, i, -1);
    l1.b1[i] = -0.5;
    l1.w2.set(i, gatedDim(s, t), 2);
  });

  // Layer 2: last own token (A), trigger since last <|speak|> (B), kind of the latest trigger (C).
  const l2 = emptyLayer();
  recencyHead(
    l2,
    0,
    s.own.map((t) => gatedDim(s, t)),
  );
  s.own.forEach((t, i) => {
    l2.v.set(gatedDim(s, t), i, 1);
    l2.o.set(i, ownDim(s, t), 1);
  });
  recencyHead(l2, 1, [F.USER_TRIG, F.BACKEND_TRIG, F.CONSUMER]);
  l2.v.set(F.USER_TRIG, headDim, 1);
  l2.v.set(F.BACKEND_TRIG, headDim, 1);
  l2.o.set(headDim, F.PENDING, 1);
  recencyHead(l2, 2, [F.USER_TRIG, F.BACKEND_TRIG]);
  l2.v.set(F.USER_TRIG, 2 * headDim, 1);
  l2.v.set(F.BACKEND_TRIG, 2 * headDim + 1, 1);
  l2.o.set(2 * headDim, F.TYPE_USER, 1);
  l2.o.set(2 * headDim + 1, F.TYPE_BACKEND, 1);
  // MLP units: idle = relu(1 - own continuing); speak_now = relu(pending - continuing - voice now);
  // say_user / say_backend = relu(last was <|speak|> + trigger kind - 1).
  l2.w1.set(F.CONST, 0, 1);
  l2.w1.set(F.PENDING, 1, 1);
  l2.w1.set(F.CUR_VOICE, 1, -1);
  for (const t of continuing) {
    l2.w1.set(ownDim(s, t), 0, -1);
    l2.w1.set(ownDim(s, t), 1, -1);
  }
  l2.w1.set(ownDim(s, s.special.speak), 2, 1);
  l2.w1.set(F.TYPE_USER, 2, 1);
  l2.b1[2] = -1;
  l2.w1.set(ownDim(s, s.special.speak), 3, 1);
  l2.w1.set(F.TYPE_BACKEND, 3, 1);
  l2.b1[3] = -1;
  l2.w2.set(0, F.IDLE, 1);
  l2.w2.set(1, F.SPEAK_NOW, 1);
  l2.w2.set(2, F.SAY_USER, 1);
  l2.w2.set(3, F.SAY_BACKEND, 1);

  const out = new Matrix(TINY_DIMS.hidden, vocab);
  out.add(F.CONST, s.special.listen, 1);
  out.add(F.IDLE, s.special.listen, 10);
  out.add(F.SPEAK_NOW, s.special.speak, 20);
  out.add(F.SAY_USER, s.sure, 30);
  out.add(ownDim(s, s.special.speak), s.sure, 15);
  out.add(F.SAY_BACKEND, s.here, 30);
  for (const [t, n] of s.next) if (t !== s.special.speak) out.add(ownDim(s, t), n, 30);
  return { layers: [l1, l2], out, vocab };
}

export function buildDecoder(tk: TinyTokenizer): Uint8Array {
  const s = script(tk);
  const { hidden, heads, headDim, mlp, layers } = TINY_DIMS;
  const inner = heads * headDim;
  const weights = decoderWeights(s);
  if (weights.vocab > tk.vocabSize) throw new Error('script ids outside the vocabulary');
  const g = new GraphBuilder('decoder');
  const embeds = g.input('inputs_embeds', ONNX_FLOAT, ['batch', 'seq', hidden]);
  const mask = g.input('attention_mask', ONNX_INT64, ['batch', 'total']);
  const positions = g.input('position_ids', ONNX_INT64, ['batch', 'seq']);
  const past = Array.from({ length: layers }, (_, l) => ({
    key: g.input(`past_key_values.${l}.key`, ONNX_FLOAT, ['batch', heads, 'past', headDim]),
    value: g.input(`past_key_values.${l}.value`, ONNX_FLOAT, ['batch', heads, 'past', headDim]),
  }));

  const posOneHot = new Float32Array(hidden);
  posOneHot[F.POS] = 1;
  const pos = g.op('Unsqueeze', [g.op('Cast', [positions], { to: { int: ONNX_FLOAT } }), g.ints([1], [-1])]);
  let x = g.op('Add', [embeds, g.op('Mul', [pos, g.floats([hidden], posOneHot)])]);

  // Additive mask [batch, 1, seq, past + seq]: padding from attention_mask, causality from positions.
  const scalar = (v: number) => g.ints([], [v]);
  const seqLen = g.op('Gather', [g.op('Shape', [embeds]), scalar(1)], { axis: { int: 0 } });
  const pastLen = g.op('Gather', [g.op('Shape', [past[0]!.key]), scalar(2)], { axis: { int: 0 } });
  const total = g.op('Add', [pastLen, seqLen]);
  const keyIdx = g.op('Unsqueeze', [g.op('Range', [scalar(0), total, scalar(1)]), g.ints([1], [0])]);
  const queryIdx = g.op('Unsqueeze', [g.op('Range', [pastLen, total, scalar(1)]), g.ints([1], [1])]);
  const allowed = g.op('LessOrEqual', [keyIdx, queryIdx]);
  const causal = g.op('Where', [allowed, g.floats([], [0]), g.floats([], [-1e9])]);
  const maskF = g.op('Cast', [mask], { to: { int: ONNX_FLOAT } });
  const padding = g.op('Unsqueeze', [
    g.op('Mul', [g.op('Sub', [maskF, g.floats([], [1])]), g.floats([], [1e9])]),
    g.ints([2], [1, 2]),
  ]);
  const additive = g.op('Add', [padding, causal]);

  const splitHeads = (t: string) =>
    g.op('Transpose', [g.op('Reshape', [t, g.ints([4], [0, 0, heads, headDim])])], { perm: { ints: [0, 2, 1, 3] } });
  weights.layers.forEach((w, l) => {
    const q = splitHeads(g.op('MatMul', [x, g.floats([hidden, inner], w.q.data, `l${l}_q`)]));
    const kNew = splitHeads(g.op('MatMul', [x, g.floats([hidden, inner], w.k.data, `l${l}_k`)]));
    const vNew = splitHeads(g.op('MatMul', [x, g.floats([hidden, inner], w.v.data, `l${l}_v`)]));
    const key = g.op('Concat', [past[l]!.key, kNew], { axis: { int: 2 } });
    const value = g.op('Concat', [past[l]!.value, vNew], { axis: { int: 2 } });
    g.output(key, `present.${l}.key`, ONNX_FLOAT, ['batch', heads, 'total', headDim]);
    g.output(value, `present.${l}.value`, ONNX_FLOAT, ['batch', heads, 'total', headDim]);
    const scores = g.op('Add', [
      g.op('MatMul', [q, g.op('Transpose', [key], { perm: { ints: [0, 1, 3, 2] } })]),
      additive,
    ]);
    const context = g.op('MatMul', [g.op('Softmax', [scores], { axis: { int: -1 } }), value]);
    const merged = g.op('Reshape', [
      g.op('Transpose', [context], { perm: { ints: [0, 2, 1, 3] } }),
      g.ints([3], [0, 0, inner]),
    ]);
    x = g.op('Add', [x, g.op('MatMul', [merged, g.floats([inner, hidden], w.o.data, `l${l}_o`)])]);
    const h = g.op('Relu', [
      g.op('Add', [g.op('MatMul', [x, g.floats([hidden, mlp], w.w1.data, `l${l}_w1`)]), g.floats([mlp], w.b1)]),
    ]);
    x = g.op('Add', [x, g.op('MatMul', [h, g.floats([mlp, hidden], w.w2.data, `l${l}_w2`)])]);
  });
  // Full-vocabulary logits: ids the script never emits keep a logit of 0.
  const out = new Matrix(hidden, tk.vocabSize);
  for (let r = 0; r < hidden; r++)
    for (let c = 0; c < weights.vocab; c++) out.set(r, c, weights.out.data[r * weights.vocab + c] ?? 0);
  g.output(g.op('MatMul', [x, g.floats([hidden, tk.vocabSize], out.data, 'lm_head')]), 'logits', ONNX_FLOAT, [
    'batch',
    'seq',
    tk.vocabSize,
  ]);
  return encodeModel(g.graph, 17, 'Tiny Venus bundle: constructed 2-layer causal decoder (project-made, Apache-2.0).');
}

/** Every phrase the tiny model says, for the tokenizer's merges. */
export const TINY_CORPUS = [...TINY_USER_REPLY.split(/<\/?delegate>/), TINY_BACKEND_REPLY];
