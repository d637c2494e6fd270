/**
 * Band-limited resampling between fixed rates (22 050 -> 24 000 Hz for speech output, 24 000 ->
 * 16 000 Hz for test input) with a Hann-windowed sinc. The rate ratio is reduced to L/M and the
 * filter is tabulated per output phase, so each output sample costs `2 * HALF_TAPS` multiply-adds.
 * The cutoff sits at the lower of the two Nyquist frequencies, so downsampling does not alias.
 *
 * @example
 *   const pcm24k = resamplePcm16(pcm22k, 22_050, 24_000);
 */
const HALF_TAPS = 16;

interface Table {
  up: number;
  down: number;
  taps: Float32Array;
}

const tables = new Map<string, Table>();

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

function tableFor(fromHz: number, toHz: number): Table {
  const key = `${fromHz}:${toHz}`;
  const cached = tables.get(key);
  if (cached) return cached;
  const g = gcd(fromHz, toHz);
  const up = toHz / g;
  const down = fromHz / g;
  // Cutoff relative to the input rate; a little below Nyquist leaves room for the transition band.
  const cutoff = 0.95 * Math.min(1, toHz / fromHz);
  const width = 2 * HALF_TAPS;
  const taps = new Float32Array(up * width);
  for (let phase = 0; phase < up; phase++) {
    const frac = phase / up;
    let sum = 0;
    for (let k = 0; k < width; k++) {
      // Input sample offset relative to floor(t): from -(HALF_TAPS-1) to HALF_TAPS.
      const x = k - (HALF_TAPS - 1) - frac;
      const sinc = x === 0 ? 1 : Math.sin(Math.PI * cutoff * x) / (Math.PI * cutoff * x);
      const w = 0.5 + 0.5 * Math.cos((Math.PI * x) / (HALF_TAPS + 1));
      const v = cutoff * sinc * w;
      taps[phase * width + k] = v;
      sum += v;
    }
    // Unity DC gain per phase keeps silence silent and avoids a ripple at the phase rate.
    for (let k = 0; k < width; k++) taps[phase * width + k] = (taps[phase * width + k] ?? 0) / sum;
  }
  const table = { up, down, taps };
  tables.set(key, table);
  return table;
}

/** Resamples float samples in [-1, 1]; the output has `round(n * toHz / fromHz)` samples. */
export function resampleFloat(input: Float32Array, fromHz: number, toHz: number): Float32Array {
  if (fromHz === toHz) return input.slice();
  const { up, down, taps } = tableFor(fromHz, toHz);
  const width = 2 * HALF_TAPS;
  const outLength = Math.round((input.length * up) / down);
  const out = new Float32Array(outLength);
  const last = input.length - 1;
  for (let n = 0; n < outLength; n++) {
    const pos = n * down;
    const base = Math.floor(pos / up);
    const phase = pos - base * up;
    const start = base - (HALF_TAPS - 1);
    const row = phase * width;
    let acc = 0;
    if (start >= 0 && start + width - 1 <= last) {
      for (let k = 0; k < width; k++) acc += input[start + k]! * taps[row + k]!;
    } else {
      for (let k = 0; k < width; k++) {
        const i = start + k;
        if (i >= 0 && i <= last) acc += input[i]! * taps[row + k]!;
      }
    }
    out[n] = acc;
  }
  return out;
}

export function pcm16ToFloat(pcm: Int16Array): Float32Array {
  const out = new Float32Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = (pcm[i] ?? 0) / 32768;
  return out;
}

export function floatToPcm16(samples: Float32Array): Int16Array {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    const v = Math.round((samples[i] ?? 0) * 32768);
    out[i] = Math.min(32767, Math.max(-32768, v));
  }
  return out;
}

export function resamplePcm16(pcm: Int16Array, fromHz: number, toHz: number): Int16Array {
  return floatToPcm16(resampleFloat(pcm16ToFloat(pcm), fromHz, toHz));
}
