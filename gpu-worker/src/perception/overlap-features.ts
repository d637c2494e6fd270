import { DEMO_NAMES } from './pocketsphinx/demo-vocabulary.ts';
import { scoreToConfidence } from './pocketsphinx/recogniser-protocol.ts';
import { VAD_FRAME_MS } from './silero-vad.ts';
import {
  EMBEDDING_DIM,
  type EmbeddingRequest,
  EmbeddingStream,
  HOP_SAMPLES,
  type SpeechEmbedding,
} from './speech-embedding.ts';
import type { Burst } from './voice-activity.ts';

/**
 * The overlap head's input: one vector per 80 ms of an overlapping burst, computed by this module
 * both at inference (in the session thread) and by the training data pipeline (`training/`), so
 * what the head was trained on is what it sees. Acoustic statistics come from the burst's 32 ms VAD
 * frames (level, its spread, Silero's probability, zero-crossing rate, high-frequency ratio, pitch
 * from a normalised autocorrelation); word cues come from the recogniser's partial hypothesis;
 * the pretrained speech embedding (speech-embedding.ts) gives the newest 96-d embedding and its
 * mean over the burst. The statistics are hand-written because each is a few lines over a frame
 * and a DSP dependency would bring far more than this needs.
 *
 * A row's embedding part is filled after the row is made (`fillEmbeddings`, asynchronous: the
 * models run batched across sessions), from the audio the tracker kept; rows are scored only once
 * it is filled.
 */
const BASE_FEATURES = [
  'elapsed_s',
  'speech_frac',
  'level_db',
  'level_vs_foreground',
  'has_foreground',
  'level_std',
  'level_peak',
  'vad_mean',
  'vad_std',
  'zcr_mean',
  'hf_mean',
  'hf_std',
  'voiced_frac',
  'pitch_mean',
  'pitch_std',
  'ended',
  'has_words',
  'word_count',
  'early_stop_word',
  'addressee_word',
  'backchannel_only',
  'request_word',
  'correction_word',
  'grammar_fit',
] as const;
/** Where the embedding part of a row starts: the newest embedding, then its mean over the burst. */
export const EMBEDDING_OFFSET = BASE_FEATURES.length;
export const FEATURE_NAMES: readonly string[] = [
  ...BASE_FEATURES,
  ...Array.from({ length: EMBEDDING_DIM }, (_, i) => `emb_${i}`),
  ...Array.from({ length: EMBEDDING_DIM }, (_, i) => `emb_mean_${i}`),
];
export const FEATURE_COUNT = FEATURE_NAMES.length;
/** The burst mean covers at most the last 2 s (decisions are made by then). */
const MEAN_HOPS = 25;

/** A decision point every DECISION_MS of burst. */
export const DECISION_MS = 80;
/** No rows past this much burst: bounds the rows (and head runs) one burst can cost. */
export const MAX_BURST_MS = 4000;

/** The recogniser's latest partial hypothesis ('' and NaN when there is none). */
export interface PartialWords {
  text: string;
  /** Acoustic score per 10 ms frame of the grammar path (see recogniser-protocol.ts). */
  score: number;
}

export interface FeatureRow {
  burst: Burst;
  /** Burst time since onset at this decision point, ms. */
  elapsedMs: number;
  ended: boolean;
  /** FEATURE_NAMES; the embedding part is zero until `fillEmbeddings` has run. */
  features: Float32Array;
  /** The hops whose embeddings fill the embedding part: the newest is the row's own (the last complete at its frame). */
  embedding: EmbeddingRequest;
}

/**
 * Fills the embedding part of rows made by OverlapFeatureTracker (the newest embedding at each
 * row's frame and the mean over its burst's hops), computing what is missing; the rows of many
 * sessions made in one turn of the event loop run as one batch.
 */
export async function fillEmbeddings(rows: readonly FeatureRow[], model: SpeechEmbedding): Promise<void> {
  if (rows.length === 0) return;
  const embeddings = await model.embed(rows.map((r) => r.embedding));
  rows.forEach((row, i) => {
    const hops = embeddings[i]!;
    const mean = new Float32Array(EMBEDDING_DIM);
    for (const e of hops) for (let k = 0; k < EMBEDDING_DIM; k++) mean[k]! += e[k]! / hops.length;
    row.features.set(hops.at(-1)!, EMBEDDING_OFFSET);
    row.features.set(mean, EMBEDDING_OFFSET + EMBEDDING_DIM);
  });
}

const EARLY_STOP = /\b(stop|wait|hold on|never mind|cancel that|forget it)\b/;
const ADDRESSEE = new Set(['honey', 'mom', 'dad', 'kids', 'sweetie', 'hey', ...DEMO_NAMES.map((n) => n.toLowerCase())]);
const BACKCHANNEL = new Set([
  'mm-hm',
  'uh-huh',
  'yeah',
  'yes',
  'okay',
  'right',
  'sure',
  'go',
  'on',
  'thanks',
  'thank',
  'you',
]);
const REQUEST = new Set(['what', "what's", 'how', "how's", 'weather', 'time', 'is', 'tell', 'first', 'me']);
const CORRECTION = new Set(['actually', 'no', 'instead', 'make', 'it']);

/** The word cues of a partial hypothesis, in FEATURE_NAMES order from `has_words`. */
export function wordCues(partial: PartialWords): number[] {
  const text = partial.text.trim().toLowerCase();
  const words = text === '' ? [] : text.split(/\s+/);
  if (words.length === 0) return [0, 0, 0, 0, 0, 0, 0, 0];
  const some = (set: Set<string>) => (words.some((w) => set.has(w)) ? 1 : 0);
  return [
    1,
    Math.min(1, words.length / 5),
    EARLY_STOP.test(text) ? 1 : 0,
    some(ADDRESSEE),
    words.every((w) => BACKCHANNEL.has(w)) ? 1 : 0,
    some(REQUEST),
    some(CORRECTION),
    Number.isFinite(partial.score) ? scoreToConfidence(partial.score) : 0,
  ];
}

/**
 * Running statistics of one burst, fed frame by frame while the burst lasts. Memory is a fixed
 * set of sums, whatever the burst's length.
 *
 * @example
 *   const tracker = new OverlapFeatureTracker();
 *   voice.update(probabilities, frames, speaking, (frame, p, burst, ended) => {
 *     const row = tracker.frame(frame, p, burst, ended, partial, voice.foregroundDb);
 *     if (row) rows.push(row);
 *   });
 */
export class OverlapFeatureTracker {
  /** Every frame's audio, kept for the speech embedding. */
  readonly audio = new EmbeddingStream();
  private burst: Burst | null = null;
  private frames = 0;
  private s = newSums();
  private lastDecision = 0;
  /** The first hop of the burst's audio (its onset frames included). */
  private firstHop = 0;

  /** One VAD frame; returns a row when the burst (overlapping, not judged) reaches a decision point. */
  frame(
    samples: Float32Array,
    probability: number,
    burst: Burst | null,
    ended: boolean,
    partial: PartialWords,
    foregroundDb: number | null,
  ): FeatureRow | null {
    this.audio.push(samples);
    if (burst !== this.burst) {
      this.burst = burst;
      this.frames = 0;
      this.s = newSums();
      this.lastDecision = 0;
      // The burst began with the onset frame before this one.
      this.firstHop = Math.max(0, Math.floor((this.audio.samples - 2 * samples.length) / HOP_SAMPLES));
    }
    if (!burst) return null;
    this.frames += 1;
    if (this.frames * VAD_FRAME_MS <= MAX_BURST_MS) addFrame(this.s, samples, probability);
    const elapsedMs = (this.frames + 1) * VAD_FRAME_MS;
    const point = Math.floor(elapsedMs / DECISION_MS);
    const due = ended || (point > this.lastDecision && elapsedMs <= MAX_BURST_MS);
    if (ended) this.burst = null;
    if (!due || !burst.overlapped || burst.judged) return null;
    this.lastDecision = point;
    const hop = this.audio.latestHop();
    const from = Math.max(hop - MEAN_HOPS + 1, Math.min(this.firstHop, hop));
    const hops = Array.from({ length: hop - from + 1 }, (_, i) => from + i);
    const features = new Float32Array(FEATURE_COUNT);
    features.set(this.vector(elapsedMs, ended, partial, foregroundDb));
    return { burst, elapsedMs, ended, features, embedding: { stream: this.audio, hops } };
  }

  private vector(elapsedMs: number, ended: boolean, partial: PartialWords, foregroundDb: number | null): Float32Array {
    const s = this.s;
    const n = Math.max(1, s.n);
    const speech = Math.max(1, s.speechN);
    const levelDb = s.speechN > 0 ? toDb(s.speechPower / s.speechN) : toDb(s.power / n);
    const levelMean = s.speechN > 0 ? s.dbSum / speech : levelDb;
    const levelStd = Math.sqrt(Math.max(0, s.dbSq / speech - levelMean * levelMean));
    const vadMean = s.p / n;
    const hfMean = s.hf / n;
    const voiced = Math.max(1, s.voicedN);
    const pitchMean = s.voicedN > 0 ? s.pitch / voiced : 0;
    const values = [
      elapsedMs / 1000,
      s.speechN / n,
      (levelDb + 30) / 10,
      foregroundDb === null ? 0 : (levelDb - foregroundDb) / 10,
      foregroundDb === null ? 0 : 1,
      levelStd / 10,
      s.speechN > 0 ? (s.dbMax - levelMean) / 10 : 0,
      vadMean,
      Math.sqrt(Math.max(0, s.pSq / n - vadMean * vadMean)),
      (s.zcr / n) * 4,
      hfMean,
      Math.sqrt(Math.max(0, s.hfSq / n - hfMean * hfMean)),
      s.voicedN / n,
      pitchMean,
      s.voicedN > 0 ? Math.sqrt(Math.max(0, s.pitchSq / voiced - pitchMean * pitchMean)) : 0,
      ended ? 1 : 0,
      ...wordCues(partial),
    ];
    return Float32Array.from(values);
  }
}

interface Sums {
  n: number;
  speechN: number;
  power: number;
  speechPower: number;
  dbSum: number;
  dbSq: number;
  dbMax: number;
  p: number;
  pSq: number;
  zcr: number;
  hf: number;
  hfSq: number;
  voicedN: number;
  pitch: number;
  pitchSq: number;
}

function newSums(): Sums {
  return {
    n: 0,
    speechN: 0,
    power: 0,
    speechPower: 0,
    dbSum: 0,
    dbSq: 0,
    dbMax: -120,
    p: 0,
    pSq: 0,
    zcr: 0,
    hf: 0,
    hfSq: 0,
    voicedN: 0,
    pitch: 0,
    pitchSq: 0,
  };
}

function addFrame(s: Sums, x: Float32Array, p: number): void {
  let power = 0;
  let diff = 0;
  let crossings = 0;
  for (let i = 0; i < x.length; i++) {
    power += x[i]! * x[i]!;
    if (i > 0) {
      const d = x[i]! - x[i - 1]!;
      diff += d * d;
      if (x[i]! >= 0 !== x[i - 1]! >= 0) crossings += 1;
    }
  }
  power /= x.length;
  s.n += 1;
  s.power += power;
  s.p += p;
  s.pSq += p * p;
  s.zcr += crossings / x.length;
  const hf = Math.log10(Math.max(diff / x.length, 1e-12) / Math.max(power, 1e-12));
  s.hf += hf;
  s.hfSq += hf * hf;
  if (p >= 0.5) {
    const db = toDb(power);
    s.speechN += 1;
    s.speechPower += power;
    s.dbSum += db;
    s.dbSq += db * db;
    s.dbMax = Math.max(s.dbMax, db);
  }
  const f0 = pitchHz(x);
  if (f0 > 0) {
    const octaves = Math.log2(f0 / 100);
    s.voicedN += 1;
    s.pitch += octaves;
    s.pitchSq += octaves * octaves;
  }
}

/** Lags of 60-400 Hz at 8 kHz (the frame is decimated by two: a quarter of the work). */
const MIN_LAG = 20;
const MAX_LAG = 133;
const VOICED = 0.5;

/** Pitch of a 16 kHz frame by normalised autocorrelation at 8 kHz; 0 when it is not voiced. */
export function pitchHz(x: Float32Array): number {
  const half = x.length >> 1;
  const y = new Float32Array(half);
  for (let i = 0; i < half; i++) y[i] = 0.5 * (x[2 * i]! + x[2 * i + 1]!);
  let energy = 0;
  for (let i = 0; i < half; i++) energy += y[i]! * y[i]!;
  if (energy < 1e-8) return 0;
  let best = 0;
  let bestLag = 0;
  for (let lag = MIN_LAG; lag <= MAX_LAG; lag++) {
    let r = 0;
    let e1 = 0;
    let e2 = 0;
    for (let i = 0; i + lag < half; i++) {
      r += y[i]! * y[i + lag]!;
      e1 += y[i]! * y[i]!;
      e2 += y[i + lag]! * y[i + lag]!;
    }
    const c = r / Math.sqrt(Math.max(e1 * e2, 1e-12));
    if (c > best) {
      best = c;
      bestLag = lag;
    }
  }
  return best >= VOICED ? 8000 / bestLag : 0;
}

function toDb(power: number): number {
  return 10 * Math.log10(Math.max(power, 1e-12));
}
