import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/**
 * The PocketSphinx WebAssembly module (built by gpu-worker/recogniser/build/build-pocketsphinx-wasm.sh)
 * with the acoustic model and dictionary written into its in-memory file system. One per worker
 * thread; every decoder of that thread lives in its memory.
 */
export const MODEL_DIR = new URL('../../../models/pocketsphinx/', import.meta.url);

interface EmscriptenModule {
  HEAP16: Int16Array;
  HEAPF32: Float32Array;
  FS: {
    mkdir(path: string): void;
    writeFile(path: string, data: Uint8Array | string): void;
    unlink(path: string): void;
  };
  UTF8ToString(ptr: number): string;
  stringToUTF8(text: string, ptr: number, max: number): void;
  lengthBytesUTF8(text: string): number;
  _malloc(bytes: number): number;
  _free(ptr: number): void;
  _venus_ps_open(hmm: number, dict: number, jsgf: number, options: number): number;
  _venus_ps_open_phones(hmm: number, dict: number, phoneLm: number, options: number): number;
  _venus_ps_start(h: number): number;
  _venus_ps_process(h: number, pcm: number, n: number): number;
  _venus_ps_end(h: number): number;
  _venus_ps_hyp(h: number): number;
  _venus_ps_score(h: number): number;
  _venus_ps_frames(h: number): number;
  _venus_ps_close(h: number): void;
  _venus_ps_cepstra(h: number, pcm: number, n: number, start: number, last: number, out: number, max: number): number;
  _venus_ps_process_cep(h: number, cep: number, n: number): number;
  _venus_ps_set_cmn(h: number, mean: number): number;
  _venus_ps_get_cmn(h: number, out: number): number;
}

/** Cepstral coefficients per 10 ms frame in the shipped model (feat.params: 13, c0 first). */
export const CEPSTRA = 13;

const HMM = '/model/en-us';
const DICT = '/model/demo.dict';
const MODEL_FILES = ['mdef', 'sendump', 'means', 'variances', 'transition_matrices', 'feat.params', 'noisedict'];
/** Samples copied into wasm memory per ps_process_raw call (0.25 s): a fixed buffer per thread. */
const BLOCK = 4000;
/**
 * Frames one call of the front end may return: one BLOCK of samples gives 25 frames, but with
 * -remove_silence its voice activity detector holds up to -vad_prespeech (20) frames and releases
 * them with the first speech frame, plus the final partial frame.
 */
const BLOCK_FRAMES = 128;

export class PocketSphinxWasm {
  private readonly pcmPtr: number;
  private readonly cepPtr: number;
  private dictionaries = 0;

  private constructor(private readonly m: EmscriptenModule) {
    this.pcmPtr = m._malloc(BLOCK * 2);
    this.cepPtr = m._malloc(BLOCK_FRAMES * CEPSTRA * 4);
  }

  static async load(modelDir: URL = MODEL_DIR): Promise<PocketSphinxWasm> {
    const factory = createRequire(import.meta.url)(new URL('pocketsphinx.cjs', modelDir).pathname) as (
      opts: object,
    ) => Promise<EmscriptenModule>;
    // The 3.1.6 glue would fetch() the .wasm path under Node 20: hand it the bytes.
    const m = await factory({
      wasmBinary: readFileSync(new URL('pocketsphinx.wasm', modelDir)),
      print: () => {},
      printErr: () => {},
    });
    m.FS.mkdir('/model');
    m.FS.mkdir(HMM);
    for (const f of MODEL_FILES) m.FS.writeFile(`${HMM}/${f}`, readFileSync(new URL(`en-us/${f}`, modelDir)));
    m.FS.writeFile(DICT, readFileSync(new URL('demo.dict', modelDir)));
    return new PocketSphinxWasm(m);
  }

  /**
   * Grammar decoder; throws if PocketSphinx refuses the grammar. `dictionary`: the pronunciations
   * of the grammar's words (dictionary text), else the shipped demo dictionary. The decoder reads it
   * once at open; the file is removed again right after.
   */
  openGrammar(jsgf: string, options = '', dictionary?: string): number {
    const path = dictionary === undefined ? DICT : `/model/stream-${++this.dictionaries}.dict`;
    if (dictionary !== undefined) this.m.FS.writeFile(path, dictionary);
    try {
      const h = this.withStrings([HMM, path, jsgf, options], (hmm, dict, g, o) =>
        this.m._venus_ps_open(hmm!, dict!, g!, o!),
      );
      if (h === 0) throw new Error('PocketSphinx refused the grammar or the model');
      return h;
    } finally {
      if (dictionary !== undefined) this.m.FS.unlink(path);
    }
  }

  /** Phone-loop decoder: the open-vocabulary yardstick for rejection. */
  openPhoneLoop(options = ''): number {
    const h = this.withStrings([HMM, DICT, '', options], (hmm, dict, lm, o) =>
      this.m._venus_ps_open_phones(hmm!, dict!, lm!, o!),
    );
    if (h === 0) throw new Error('PocketSphinx refused the phone loop');
    return h;
  }

  start(h: number): void {
    if (this.m._venus_ps_start(h) < 0) throw new Error('ps_start_utt failed');
  }

  process(h: number, pcm: Int16Array): void {
    for (let at = 0; at < pcm.length; at += BLOCK) {
      const part = pcm.subarray(at, Math.min(pcm.length, at + BLOCK));
      // HEAP16 is replaced when memory grows: read it afresh each time.
      this.m.HEAP16.set(part, this.pcmPtr >> 1);
      if (this.m._venus_ps_process(h, this.pcmPtr, part.length) < 0) throw new Error('ps_process_raw failed');
    }
  }

  /**
   * The decoder's own front end over `pcm`, without searching: frames x CEPSTRA floats. `start`
   * begins an utterance (the front end's state resets); `last` flushes its final partial frame.
   * What it returns (transformed or not) goes to processCepstra between start() and end().
   */
  cepstra(h: number, pcm: Int16Array, start: boolean, last: boolean): Float32Array {
    const parts: Float32Array[] = [];
    let total = 0;
    let at = 0;
    do {
      const part = pcm.subarray(at, Math.min(pcm.length, at + BLOCK));
      const first = start && at === 0;
      const final = last && at + BLOCK >= pcm.length;
      this.m.HEAP16.set(part, this.pcmPtr >> 1);
      const n = this.m._venus_ps_cepstra(
        h,
        this.pcmPtr,
        part.length,
        first ? 1 : 0,
        final ? 1 : 0,
        this.cepPtr,
        BLOCK_FRAMES,
      );
      if (n < 0) throw new Error(`PocketSphinx front end failed (${n})`);
      const base = this.cepPtr >> 2;
      parts.push(this.m.HEAPF32.slice(base, base + n * CEPSTRA));
      total += n * CEPSTRA;
      at += BLOCK;
    } while (at < pcm.length);
    const out = new Float32Array(total);
    let offset = 0;
    for (const p of parts) {
      out.set(p, offset);
      offset += p.length;
    }
    return out;
  }

  /** Searches cepstra (frames x CEPSTRA, from cepstra()) instead of audio. */
  processCepstra(h: number, cep: Float32Array): void {
    const step = BLOCK_FRAMES * CEPSTRA;
    for (let at = 0; at < cep.length; at += step) {
      const part = cep.subarray(at, Math.min(cep.length, at + step));
      this.m.HEAPF32.set(part, this.cepPtr >> 2);
      if (this.m._venus_ps_process_cep(h, this.cepPtr, part.length / CEPSTRA) < 0)
        throw new Error('ps_process_cep failed');
    }
  }

  /**
   * Sets the decoder's running cepstral mean (CEPSTRA floats, in the units cepstra() returns): what
   * the search subtracts from every frame until the mean has adapted to the voice. StreamDecoder
   * (stream-decoder.ts) sets it from a stream's own first speech, through CepstralMeanEstimate.
   */
  setCepstralMean(h: number, mean: Float32Array): void {
    if (mean.length !== CEPSTRA) throw new Error(`a cepstral mean has ${CEPSTRA} values, got ${mean.length}`);
    this.m.HEAPF32.set(mean, this.cepPtr >> 2);
    if (this.m._venus_ps_set_cmn(h, this.cepPtr) < 0) throw new Error('the decoder has no live cepstral mean');
  }

  /** The decoder's running cepstral mean now (CEPSTRA floats). */
  cepstralMeanOf(h: number): Float32Array {
    if (this.m._venus_ps_get_cmn(h, this.cepPtr) < 0) throw new Error('the decoder has no live cepstral mean');
    return this.m.HEAPF32.slice(this.cepPtr >> 2, (this.cepPtr >> 2) + CEPSTRA);
  }

  end(h: number): void {
    this.m._venus_ps_end(h);
  }

  hypothesis(h: number): { text: string; score: number; frames: number } {
    const ptr = this.m._venus_ps_hyp(h);
    return {
      text: ptr === 0 ? '' : this.m.UTF8ToString(ptr),
      score: this.m._venus_ps_score(h),
      frames: this.m._venus_ps_frames(h),
    };
  }

  free(h: number): void {
    this.m._venus_ps_close(h);
  }

  private withStrings<T>(texts: string[], use: (...ptrs: number[]) => T): T {
    const ptrs = texts.map((t) => {
      const n = this.m.lengthBytesUTF8(t) + 1;
      const p = this.m._malloc(n);
      this.m.stringToUTF8(t, p, n);
      return p;
    });
    try {
      return use(...ptrs);
    } finally {
      for (const p of ptrs) this.m._free(p);
    }
  }
}

/**
 * A running mean of cepstra (frames x CEPSTRA, as cepstra() returns them) over the frames
 * PocketSphinx's live CMN counts: those with c0 at least 0 (it skips "zero energy" frames).
 *
 * @example
 *   const estimate = new CepstralMeanEstimate();
 *   estimate.add(ps.cepstra(h, pcm, true, true));
 *   const mean = estimate.mean(); // null until a frame counted
 */
export class CepstralMeanEstimate {
  private readonly sum = new Float64Array(CEPSTRA);
  /** Frames counted so far (100 per second of speech). */
  frames = 0;

  add(cep: Float32Array): void {
    for (let at = 0; at + CEPSTRA <= cep.length; at += CEPSTRA) {
      if (cep[at]! < 0) continue;
      for (let j = 0; j < CEPSTRA; j++) this.sum[j] = this.sum[j]! + cep[at + j]!;
      this.frames += 1;
    }
  }

  mean(): Float32Array | null {
    if (this.frames === 0) return null;
    return Float32Array.from(this.sum, (v) => v / this.frames);
  }
}
