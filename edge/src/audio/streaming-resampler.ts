import { FirKernel } from './fir-kernel.ts';

/**
 * Rational-ratio resampler for a continuous mono s16 stream (polyphase windowed-sinc FIR).
 * Appends arrive in arbitrary sizes, so the filter history and output phase carry over between
 * calls: feeding a stream in pieces gives the same samples as feeding it whole, and after N input
 * samples exactly floor(N * outRate / inRate) output samples have come out. The low-pass sits
 * below the lower of the two Nyquist frequencies, so downsampling does not fold high frequencies
 * back into the band (plain decimation or linear interpolation would).
 *
 * The inner loop runs in a SIMD WebAssembly kernel (fir-kernel.wat) where the runtime compiles one,
 * about ten times faster than the JavaScript loop it falls back to (Cloudflare Workers): at 500
 * streams the edge resamples 25,000 frames a second.
 *
 * @example
 *   const to16k = new StreamingResampler(24_000, 16_000);
 *   const out = to16k.process(pcm24k); // 480 samples in -> 320 samples out
 */
export class StreamingResampler {
  readonly inputRateHz: number;
  readonly outputRateHz: number;
  readonly #design: FilterDesign;
  /** The SIMD kernel and this design's table in its memory; undefined runs the JavaScript loop. */
  readonly #kernel: { kernel: FirKernel; table: number } | undefined;
  /** The last input samples, kept for the next call: K - 1 of them (Kp - 1 with the kernel). */
  #history: Float64Array | Float32Array;
  /** Global index, in the upsampled domain, of the next output sample. */
  #nextT = 0;
  /** Global count of input samples received. */
  #received = 0;

  /**
   * `simd: false` forces the plain JavaScript loop (the SIMD WebAssembly kernel is used wherever
   * it can be compiled; both give the same samples give or take one LSB of float rounding).
   */
  constructor(inputRateHz: number, outputRateHz: number, options: { simd?: boolean } = {}) {
    if (!Number.isInteger(inputRateHz) || !Number.isInteger(outputRateHz) || inputRateHz <= 0 || outputRateHz <= 0) {
      throw new RangeError(`sample rates must be positive integers, got ${inputRateHz} -> ${outputRateHz}`);
    }
    this.inputRateHz = inputRateHz;
    this.outputRateHz = outputRateHz;
    this.#design = designFor(inputRateHz, outputRateHz);
    const kernel = options.simd === false ? undefined : FirKernel.load();
    if (kernel === undefined) {
      this.#history = new Float64Array(this.#design.tapsPerPhase - 1);
    } else {
      this.#kernel = { kernel, table: kernelTable(kernel, this.#design) };
      this.#history = new Float32Array(this.#design.paddedTaps - 1);
    }
  }

  /** Resamples the next piece of the stream. */
  process(input: Int16Array): Int16Array<ArrayBuffer> {
    const { up, down } = this.#design;
    const keep = this.#history.length;
    const base = this.#received - keep; // global input index of the window's first sample
    this.#received += input.length;
    const out = new Int16Array(Math.ceil(((input.length + 1) * up) / down) + 1);
    const at = Math.floor(this.#nextT / up) - base;
    const phase = this.#nextT % up;
    const produced =
      this.#kernel === undefined
        ? this.#processJs(input, at, phase, out)
        : this.#kernel.kernel.run(
            this.#kernel.table,
            this.#design.paddedTaps,
            this.#history as Float32Array,
            input,
            at,
            phase,
            up,
            down,
            out,
          );
    this.#nextT += produced * down;
    return out.subarray(0, produced);
  }

  /** Forgets the stream so far (a new, unrelated stream follows). */
  reset(): void {
    this.#history.fill(0);
    this.#nextT = 0;
    this.#received = 0;
  }

  #processJs(input: Int16Array, at: number, phase: number, out: Int16Array): number {
    const { up, down, coeffs, tapsPerPhase: K } = this.#design;
    const keep = this.#history.length;
    const end = keep + input.length;
    const buffer = new Float64Array(end);
    buffer.set(this.#history);
    for (let i = 0; i < input.length; i++) buffer[keep + i] = input[i]!;
    let produced = 0;
    // Integer position and phase in locals: this runs for every 20 ms of every stream.
    for (let newest = at, p = phase; newest < end; ) {
      const offset = p * K;
      let acc = 0;
      for (let j = 0; j < K; j++) acc += coeffs[offset + j]! * buffer[newest - j]!;
      out[produced++] = acc > 32767 ? 32767 : acc < -32768 ? -32768 : Math.round(acc);
      p += down;
      newest += Math.floor(p / up);
      p %= up;
    }
    this.#history = buffer.slice(end - keep);
    return produced;
  }
}

interface FilterDesign {
  up: number;
  down: number;
  tapsPerPhase: number;
  /** Coefficients by phase: phase p, tap j (newest sample first) at [p * tapsPerPhase + j]. */
  coeffs: Float64Array;
  /** Taps per phase rounded up to a multiple of 4 (the kernel's SIMD width). */
  paddedTaps: number;
}

/** One filter per rate pair, shared by every stream (5,000 connections do not design 5,000 filters). */
const designs = new Map<string, FilterDesign>();
const kernelTables = new WeakMap<FirKernel, Map<FilterDesign, number>>();

function designFor(inputRateHz: number, outputRateHz: number): FilterDesign {
  const key = `${inputRateHz}:${outputRateHz}`;
  const known = designs.get(key);
  if (known !== undefined) return known;
  const g = gcd(inputRateHz, outputRateHz);
  const up = outputRateHz / g;
  const down = inputRateHz / g;
  const prototypeRate = inputRateHz * up;
  const nyquist = Math.min(inputRateHz, outputRateHz) / 2;
  // Transition band of a quarter of the narrower Nyquist: about 1 kHz at 8 kHz, 2 kHz at 16 kHz.
  const transition = nyquist / 4;
  const cutoff = nyquist - transition / 2;
  const length = Math.ceil((5.5 * prototypeRate) / transition / up) * up; // Blackman: ~5.5 fs / N
  const tapsPerPhase = length / up;
  const design: FilterDesign = {
    up,
    down,
    tapsPerPhase,
    coeffs: designPolyphase(length, cutoff / prototypeRate, up, tapsPerPhase),
    paddedTaps: Math.ceil(tapsPerPhase / 4) * 4,
  };
  designs.set(key, design);
  return design;
}

/** The design's table in the kernel's layout (each phase oldest tap first, zeros in front), placed once. */
function kernelTable(kernel: FirKernel, design: FilterDesign): number {
  let tables = kernelTables.get(kernel);
  if (tables === undefined) {
    tables = new Map();
    kernelTables.set(kernel, tables);
  }
  const known = tables.get(design);
  if (known !== undefined) return known;
  const { up, tapsPerPhase: K, paddedTaps: Kp, coeffs } = design;
  const table = new Float32Array(up * Kp);
  for (let p = 0; p < up; p++) {
    for (let j = 0; j < K; j++) table[p * Kp + (Kp - 1 - j)] = coeffs[p * K + j]!;
  }
  const offset = kernel.place(table);
  tables.set(design, offset);
  return offset;
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/** Blackman-windowed sinc low-pass at `cutoff` (cycles per prototype sample), split into phases. */
function designPolyphase(length: number, cutoff: number, up: number, tapsPerPhase: number): Float64Array {
  const prototype = new Float64Array(length);
  const centre = (length - 1) / 2;
  for (let n = 0; n < length; n++) {
    const x = n - centre;
    const sinc = x === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * x) / (Math.PI * x);
    const w =
      0.42 - 0.5 * Math.cos((2 * Math.PI * n) / (length - 1)) + 0.08 * Math.cos((4 * Math.PI * n) / (length - 1));
    prototype[n] = sinc * w;
  }
  const coeffs = new Float64Array(length);
  for (let p = 0; p < up; p++) {
    // Each phase gets unit DC gain so a constant input stays constant whatever the phase.
    let sum = 0;
    for (let j = 0; j < tapsPerPhase; j++) sum += prototype[p + j * up]!;
    for (let j = 0; j < tapsPerPhase; j++) coeffs[p * tapsPerPhase + j] = prototype[p + j * up]! / sum;
  }
  return coeffs;
}
