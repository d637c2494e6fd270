import { FIR_KERNEL_WASM_BASE64 } from './fir-kernel-wasm.ts';

interface FirExports {
  memory: WebAssembly.Memory;
  fir(
    coef: number,
    kp: number,
    buf: number,
    out: number,
    at: number,
    phase: number,
    end: number,
    up: number,
    down: number,
  ): number;
}

const PAGE_BYTES = 65_536;

/**
 * The SIMD inner loop of StreamingResampler (fir-kernel.wat), one instance per thread. Coefficient
 * tables are placed once, from the bottom of its memory up; each `process` call borrows the space
 * above them as scratch, which is safe because calls never overlap on one thread.
 */
export class FirKernel {
  readonly #exports: FirExports;
  /** First free byte above the coefficient tables. */
  #top = 0;
  #f32 = new Float32Array(0);
  #i16 = new Int16Array(0);

  private constructor(exports: FirExports) {
    this.#exports = exports;
    this.#views();
  }

  /**
   * The kernel, or undefined where WebAssembly cannot be compiled from bytes at run time (Cloudflare
   * Workers forbid it) or lacks SIMD: callers then use their plain JavaScript loop.
   */
  static load(): FirKernel | undefined {
    if (loaded === undefined) {
      try {
        const bytes = Uint8Array.from(atob(FIR_KERNEL_WASM_BASE64), (c) => c.charCodeAt(0));
        const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), {});
        loaded = new FirKernel(instance.exports as unknown as FirExports);
      } catch {
        loaded = null;
      }
    }
    return loaded ?? undefined;
  }

  /** Copies one coefficient table in for good; returns its byte offset. */
  place(coefficients: Float32Array): number {
    const at = this.#top;
    this.#reserve(at + coefficients.byteLength);
    this.#f32.set(coefficients, at / 4);
    this.#top = at + coefficients.byteLength;
    return at;
  }

  /**
   * Runs the kernel over `history` then `input`; the outputs land in `out` (returned count), and the
   * last `history.length` samples of the window are copied back into `history`.
   */
  run(
    table: number,
    kp: number,
    history: Float32Array,
    input: Int16Array,
    at: number,
    phase: number,
    up: number,
    down: number,
    out: Int16Array,
  ): number {
    const window = history.length + input.length;
    const buf = this.#top;
    const outAt = buf + window * 4;
    this.#reserve(outAt + out.length * 2);
    const f32 = this.#f32;
    const base = buf / 4;
    f32.set(history, base);
    const from = base + history.length;
    for (let i = 0; i < input.length; i++) f32[from + i] = input[i]!;
    const produced = this.#exports.fir(table, kp, buf, outAt, at, phase, window, up, down);
    history.set(f32.subarray(base + window - history.length, base + window));
    out.set(this.#i16.subarray(outAt / 2, outAt / 2 + produced));
    return produced;
  }

  #reserve(bytes: number): void {
    const memory = this.#exports.memory;
    if (bytes > memory.buffer.byteLength) {
      memory.grow(Math.ceil((bytes - memory.buffer.byteLength) / PAGE_BYTES));
    }
    if (this.#f32.buffer !== memory.buffer) this.#views();
  }

  #views(): void {
    this.#f32 = new Float32Array(this.#exports.memory.buffer);
    this.#i16 = new Int16Array(this.#exports.memory.buffer);
  }
}

let loaded: FirKernel | null | undefined;
