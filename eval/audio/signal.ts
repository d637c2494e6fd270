/**
 * Small signal helpers for building test inputs: float <-> PCM16, active speech level, gain,
 * silence trimming, mixing onto a track and seeded pink noise. Levels are dBFS of mean power
 * (a full-scale square wave is 0 dBFS), which is what the reference model's overlap rules measure.
 */
const FRAME = 512;

export function toFloat(pcm: Int16Array): Float32Array {
  const out = new Float32Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = (pcm[i] ?? 0) / 32768;
  return out;
}

export function toPcm16(samples: Float32Array): Int16Array {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    out[i] = Math.max(-32768, Math.min(32767, Math.round((samples[i] ?? 0) * 32768)));
  }
  return out;
}

export function powerToDb(power: number): number {
  return 10 * Math.log10(Math.max(power, 1e-12));
}

/**
 * Active level: mean power of the 32 ms frames within 35 dB of the loudest one, so the pauses
 * between words do not pull the level of a sentence down.
 */
export function activeLevelDb(samples: Float32Array): number {
  const powers: number[] = [];
  for (let at = 0; at + FRAME <= samples.length; at += FRAME) {
    let sum = 0;
    for (let i = at; i < at + FRAME; i++) sum += samples[i]! * samples[i]!;
    powers.push(sum / FRAME);
  }
  if (powers.length === 0) return -120;
  const floor = Math.max(...powers) * 10 ** -3.5;
  const active = powers.filter((p) => p >= floor);
  return powerToDb(active.reduce((a, b) => a + b, 0) / active.length);
}

/** A copy scaled so that its active level is `targetDb`. */
export function normalizeTo(samples: Float32Array, targetDb: number): Float32Array {
  const gain = 10 ** ((targetDb - activeLevelDb(samples)) / 20);
  return samples.map((x) => x * gain);
}

/** Drops leading and trailing silence (below `thresholdDb` peak amplitude), keeping `padMs` either side. */
export function trimSilence(samples: Float32Array, rateHz: number, thresholdDb = -45, padMs = 20): Float32Array {
  const threshold = 10 ** (thresholdDb / 20);
  let first = samples.findIndex((x) => Math.abs(x) > threshold);
  if (first < 0) return new Float32Array(0);
  let last = samples.length - 1;
  while (last > first && Math.abs(samples[last]!) <= threshold) last--;
  const pad = Math.round((padMs / 1000) * rateHz);
  first = Math.max(0, first - pad);
  last = Math.min(samples.length - 1, last + pad);
  return samples.slice(first, last + 1);
}

/** Adds `source` onto `track` starting at sample `at` (clipped to the track). */
export function mixInto(track: Float32Array, source: Float32Array, at: number): void {
  for (let i = 0; i < source.length; i++) {
    const j = at + i;
    if (j >= 0 && j < track.length) track[j] = track[j]! + source[i]!;
  }
}

/** Pink-ish noise (Paul Kellet's economy filter over white noise) at a mean-power level. */
export function pinkNoise(length: number, levelDb: number, random: () => number): Float32Array {
  const out = new Float32Array(length);
  let b0 = 0;
  let b1 = 0;
  let b2 = 0;
  let sum = 0;
  for (let i = 0; i < length; i++) {
    const white = random() * 2 - 1;
    b0 = 0.99765 * b0 + white * 0.099046;
    b1 = 0.963 * b1 + white * 0.2965164;
    b2 = 0.57 * b2 + white * 1.0526913;
    const v = b0 + b1 + b2 + white * 0.1848;
    out[i] = v;
    sum += v * v;
  }
  const gain = length === 0 ? 0 : 10 ** (levelDb / 20) / Math.sqrt(sum / length);
  for (let i = 0; i < length; i++) out[i] = out[i]! * gain;
  return out;
}
