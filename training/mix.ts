import { decodeMulaw, encodeMulaw } from '../edge/src/audio/g711.ts';
import { toFloat, toPcm16 } from '../eval/audio/signal.ts';
import { resampleFloat, resamplePcm16 } from '../gpu-worker/src/reference-model/resample.ts';

/**
 * Signal treatments for the overlap clips, all on 16 kHz float audio and all deterministic given
 * the random source: band-limiting (RBJ biquads), a sparse synthetic room (reverb), a music bed,
 * tempo/pitch change by resampling, and the 8 kHz μ-law telephone round trip (the edge's own G.711).
 * Written here because each is a few lines and sox would add a process per clip.
 */
const RATE = 16_000;

export function biquad(x: Float32Array, type: 'lowpass' | 'highpass', hz: number, q = Math.SQRT1_2): Float32Array {
  const w = (2 * Math.PI * hz) / RATE;
  const alpha = Math.sin(w) / (2 * q);
  const cos = Math.cos(w);
  const b1 = type === 'lowpass' ? 1 - cos : -(1 + cos);
  const b0 = type === 'lowpass' ? b1 / 2 : -b1 / 2;
  const a0 = 1 + alpha;
  const [nb0, nb1, nb2, na1, na2] = [b0 / a0, b1 / a0, b0 / a0, (-2 * cos) / a0, (1 - alpha) / a0];
  const y = new Float32Array(x.length);
  let [x1, x2, y1, y2] = [0, 0, 0, 0];
  for (let i = 0; i < x.length; i++) {
    const v = nb0 * x[i]! + nb1 * x1 + nb2 * x2 - na1 * y1 - na2 * y2;
    [x2, x1, y2, y1] = [x1, x[i]!, y1, v];
    y[i] = v;
  }
  return y;
}

/** A room: the direct sound plus REVERB_TAPS reflections decaying to -60 dB at `rt60S`. */
const REVERB_TAPS = 240;
export function reverb(x: Float32Array, rt60S: number, random: () => number): Float32Array {
  const tail = Math.round(rt60S * RATE * 0.6);
  const y = new Float32Array(x.length + tail);
  y.set(x);
  for (let k = 0; k < REVERB_TAPS; k++) {
    const delay = Math.round(80 + random() * tail);
    const gain = (random() * 2 - 1) * 0.35 * 10 ** ((-3 * delay) / (rt60S * RATE));
    for (let i = 0; i < x.length; i++) y[i + delay]! += gain * x[i]!;
  }
  return y;
}

/** Chords of soft sines changing every half second: a radio's music bed. */
export function musicBed(length: number, random: () => number): Float32Array {
  const y = new Float32Array(length);
  const step = RATE / 2;
  for (let at = 0; at < length; at += step) {
    const root = 110 * 2 ** (Math.floor(random() * 12) / 12);
    const notes = [root, root * 1.26, root * 1.5, root * 2];
    for (let i = at; i < Math.min(length, at + step); i++) {
      const env = Math.min(1, (i - at) / 400, (at + step - i) / 400);
      let v = 0;
      for (const f of notes) v += Math.sin((2 * Math.PI * f * i) / RATE);
      y[i] = (env * v) / notes.length;
    }
  }
  return y;
}

/** Faster (factor > 1) or slower speech, pitch moving with it (rates on a 400 Hz grid keep the resampler's table small). */
export function changeSpeed(x: Float32Array, factor: number): Float32Array {
  return resampleFloat(x, RATE, Math.round(RATE / factor / 400) * 400);
}

/** Down to 8 kHz, through μ-law and back: what a phone call leaves of the audio. */
export function telephone(x: Float32Array): Float32Array {
  const narrow = resamplePcm16(toPcm16(x), RATE, 8000);
  return toFloat(resamplePcm16(decodeMulaw(encodeMulaw(narrow)), 8000, RATE));
}
