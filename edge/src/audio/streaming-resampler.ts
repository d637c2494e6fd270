/**
 * Rational-ratio resampler for a continuous mono s16 stream (polyphase windowed-sinc FIR).
 * Appends arrive in arbitrary sizes, so the filter history and output phase carry over between
 * calls: feeding a stream in pieces gives the same samples as feeding it whole, and after N input
 * samples exactly floor(N * outRate / inRate) output samples have come out. The low-pass sits
 * below the lower of the two Nyquist frequencies, so downsampling does not fold high frequencies
 * back into the band (plain decimation or linear interpolation would).
 *
 * @example
 *   const to16k = new StreamingResampler(24_000, 16_000);
 *   const out = to16k.process(pcm24k); // 480 samples in -> 320 samples out
 */
export class StreamingResampler {
  readonly inputRateHz: number;
  readonly outputRateHz: number;
  readonly #up: number;
  readonly #down: number;
  readonly #tapsPerPhase: number;
  /** Coefficients by phase: phase p, tap j at [p * tapsPerPhase + j]. */
  readonly #coeffs: Float32Array;
  #history: Float32Array;
  /** Global index, in the upsampled domain, of the next output sample. */
  #nextT = 0;
  /** Global count of input samples received. */
  #received = 0;

  constructor(inputRateHz: number, outputRateHz: number) {
    if (!Number.isInteger(inputRateHz) || !Number.isInteger(outputRateHz) || inputRateHz <= 0 || outputRateHz <= 0) {
      throw new RangeError(`sample rates must be positive integers, got ${inputRateHz} -> ${outputRateHz}`);
    }
    this.inputRateHz = inputRateHz;
    this.outputRateHz = outputRateHz;
    const g = gcd(inputRateHz, outputRateHz);
    this.#up = outputRateHz / g;
    this.#down = inputRateHz / g;
    const prototypeRate = inputRateHz * this.#up;
    const nyquist = Math.min(inputRateHz, outputRateHz) / 2;
    // Transition band of a quarter of the narrower Nyquist: about 1 kHz at 8 kHz, 2 kHz at 16 kHz.
    const transition = nyquist / 4;
    const cutoff = nyquist - transition / 2;
    const length = Math.ceil((5.5 * prototypeRate) / transition / this.#up) * this.#up; // Blackman: ~5.5 fs / N
    this.#tapsPerPhase = length / this.#up;
    this.#coeffs = designPolyphase(length, cutoff / prototypeRate, this.#up, this.#tapsPerPhase);
    this.#history = new Float32Array(this.#tapsPerPhase - 1);
  }

  /** Resamples the next piece of the stream. */
  process(input: Int16Array): Int16Array<ArrayBuffer> {
    const keep = this.#tapsPerPhase - 1;
    const buffer = new Float32Array(keep + input.length);
    buffer.set(this.#history);
    for (let i = 0; i < input.length; i++) buffer[keep + i] = input[i]!;
    const base = this.#received - keep; // global input index of buffer[0]
    this.#received += input.length;

    const capacity = Math.ceil(((input.length + 1) * this.#up) / this.#down) + 1;
    const out = new Int16Array(capacity);
    let produced = 0;
    const K = this.#tapsPerPhase;
    for (;;) {
      const newest = Math.floor(this.#nextT / this.#up);
      if (newest >= this.#received) break;
      const phaseOffset = (this.#nextT % this.#up) * K;
      const at = newest - base;
      let acc = 0;
      for (let j = 0; j < K; j++) acc += this.#coeffs[phaseOffset + j]! * buffer[at - j]!;
      out[produced++] = acc > 32767 ? 32767 : acc < -32768 ? -32768 : Math.round(acc);
      this.#nextT += this.#down;
    }
    this.#history = buffer.slice(buffer.length - keep);
    return out.subarray(0, produced);
  }

  /** Forgets the stream so far (a new, unrelated stream follows). */
  reset(): void {
    this.#history.fill(0);
    this.#nextT = 0;
    this.#received = 0;
  }
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/** Blackman-windowed sinc low-pass at `cutoff` (cycles per prototype sample), split into phases. */
function designPolyphase(length: number, cutoff: number, up: number, tapsPerPhase: number): Float32Array {
  const prototype = new Float64Array(length);
  const centre = (length - 1) / 2;
  for (let n = 0; n < length; n++) {
    const x = n - centre;
    const sinc = x === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * x) / (Math.PI * x);
    const w =
      0.42 - 0.5 * Math.cos((2 * Math.PI * n) / (length - 1)) + 0.08 * Math.cos((4 * Math.PI * n) / (length - 1));
    prototype[n] = sinc * w;
  }
  const coeffs = new Float32Array(length);
  for (let p = 0; p < up; p++) {
    // Each phase gets unit DC gain so a constant input stays constant whatever the phase.
    let sum = 0;
    for (let j = 0; j < tapsPerPhase; j++) sum += prototype[p + j * up]!;
    for (let j = 0; j < tapsPerPhase; j++) coeffs[p * tapsPerPhase + j] = prototype[p + j * up]! / sum;
  }
  return coeffs;
}
