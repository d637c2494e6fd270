import { SileroVad, VAD_FRAME_SAMPLES } from '@venus/gpu-worker';

/** A stretch of speech, in seconds on the sample's clock. */
export interface SpeechSegment {
  start: number;
  end: number;
}

export const FRAME_S = VAD_FRAME_SAMPLES / 16_000;
const ONSET = 0.5;
const OFFSET = 0.35;
/** Silence (in frames) that ends a stretch before merging: about 100 ms. */
const HANGOVER_FRAMES = 3;
const MIN_SPEECH_S = 0.09;

/** Full-Duplex-Bench's merge rules: user pauses up to 0.6 s, model pauses up to 0.5 s. */
export const MERGE_GAP_S = { user: 0.6, model: 0.5 } as const;

/**
 * Silero VAD (16 kHz, 32 ms frames) over many signals at once: every signal has its own recurrent
 * state, and frame i of all signals still running is scored in one batch, so a run of hundreds of
 * files costs a few thousand batched model calls rather than hundreds of thousands of single ones.
 *
 * @example
 *   const [inputProbs, outputProbs] = await speechProbabilities([input16k, output16k]);
 */
export async function speechProbabilities(signals: readonly Int16Array[], vad?: SileroVad): Promise<Float32Array[]> {
  const model = vad ?? (await SileroVad.create({ maxBatch: 128 }));
  try {
    const streams = signals.map(() => model.createStream());
    const counts = signals.map((s) => Math.floor(s.length / VAD_FRAME_SAMPLES));
    const out = counts.map((n) => new Float32Array(n));
    const longest = Math.max(0, ...counts);
    for (let f = 0; f < longest; f++) {
      const active: number[] = [];
      for (let i = 0; i < signals.length; i++) if (f < counts[i]!) active.push(i);
      const frames = active.map((i) => {
        const pcm = signals[i]!.subarray(f * VAD_FRAME_SAMPLES, (f + 1) * VAD_FRAME_SAMPLES);
        const frame = new Float32Array(VAD_FRAME_SAMPLES);
        for (let k = 0; k < frame.length; k++) frame[k] = pcm[k]! / 32768;
        return frame;
      });
      const probs = await model.run(
        active.map((i) => streams[i]!),
        frames,
      );
      active.forEach((i, k) => {
        out[i]![f] = probs[k] ?? 0;
      });
    }
    return out;
  } finally {
    if (!vad) await model.close();
  }
}

/**
 * Speech stretches from per-frame probabilities: onset at p >= 0.5, offset after ~100 ms below
 * 0.35 (hysteresis, as Silero's own timestamp helper does), stretches under 90 ms dropped, then
 * pauses up to `mergeGapS` merged.
 */
export function speechSegments(probabilities: Float32Array, mergeGapS: number): SpeechSegment[] {
  const raw: SpeechSegment[] = [];
  let start: number | null = null;
  let lastSpeech = -1;
  let quiet = 0;
  for (let f = 0; f < probabilities.length; f++) {
    const p = probabilities[f]!;
    if (start === null) {
      if (p >= ONSET) {
        start = f;
        lastSpeech = f;
        quiet = 0;
      }
      continue;
    }
    if (p >= OFFSET) {
      lastSpeech = f;
      quiet = 0;
    } else if (++quiet >= HANGOVER_FRAMES) {
      raw.push({ start: start * FRAME_S, end: (lastSpeech + 1) * FRAME_S });
      start = null;
    }
  }
  if (start !== null) raw.push({ start: start * FRAME_S, end: (lastSpeech + 1) * FRAME_S });
  return mergeSegments(
    raw.filter((s) => s.end - s.start >= MIN_SPEECH_S),
    mergeGapS,
  );
}

export function mergeSegments(segments: readonly SpeechSegment[], gapS: number): SpeechSegment[] {
  const merged: SpeechSegment[] = [];
  for (const s of [...segments].sort((a, b) => a.start - b.start)) {
    const last = merged[merged.length - 1];
    if (last && s.start - last.end <= gapS) last.end = Math.max(last.end, s.end);
    else merged.push({ ...s });
  }
  return merged.map((s) => ({ start: round3(s.start), end: round3(s.end) }));
}

/** Seconds of overlap between [a0, a1] and [b0, b1]. */
export function overlapS(a0: number, a1: number, b0: number, b1: number): number {
  return Math.max(0, Math.min(a1, b1) - Math.max(a0, b0));
}

export function segmentAt(segments: readonly SpeechSegment[], t: number): SpeechSegment | undefined {
  return segments.find((s) => s.start <= t && t <= s.end);
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
