import { readFileSync } from 'node:fs';
import { CEPSTRA, MODEL_DIR } from './pocketsphinx-wasm.ts';

/**
 * Telephone-band speech for a wideband acoustic model. The shipped model (PocketSphinx en-us) was
 * trained on 16 kHz audio with mel filters up to 6.8 kHz; audio that went through an 8 kHz call (the
 * SIP bridge, a `g711_ulaw` session, a phone recording) has nothing above 4 kHz, so those filters
 * read empty and every cepstrum moves. A stream whose speech has no energy above 5 kHz is decoded
 * through TelephoneMap: the front end's cepstra, mapped towards what the same speech gives in the
 * full band, then searched (eval/spoken-delegation/findings.md item 0d has the figures).
 */

/** 16 kHz samples: a band decision needs at least this much audio above the floor (0.3 s). */
const MIN_SAMPLES = 16 * 300;
/** Samples quieter than this (|x| in 16-bit units, about -60 dBFS) do not count towards a decision. */
const FLOOR = 33;
/**
 * Energy above 5 kHz relative to all, in dB, below which the speech is telephone-band. Measured on
 * the held-out request voices (eval/spoken-delegation): after the 8 kHz mu-law round trip -61 to
 * -79 dB; the same speech at 16 kHz -17 to -48 dB (the lowest a Flite voice with little treble).
 */
export const NARROW_BAND_DB = -55;

/** Four cascaded second-order high-pass sections at 5 kHz (16 kHz sampling): 48 dB per octave. */
const SECTIONS = 4;
const HP = (() => {
  const w = (2 * Math.PI * 5000) / 16_000;
  const alpha = Math.sin(w) / (2 * Math.SQRT1_2);
  const cos = Math.cos(w);
  const a0 = 1 + alpha;
  return {
    b0: (1 + cos) / 2 / a0,
    b1: -(1 + cos) / a0,
    b2: (1 + cos) / 2 / a0,
    a1: (-2 * cos) / a0,
    a2: (1 - alpha) / a0,
  };
})();

/**
 * Measures one stream's speech until it can say whether it is telephone-band. Feed it what the
 * recogniser decodes; `verdict` is null until enough audio above the floor was heard.
 */
export class BandMeter {
  private readonly state = new Float64Array(SECTIONS * 4);
  private high = 0;
  private all = 0;
  private counted = 0;

  push(pcm: Int16Array): void {
    const { b0, b1, b2, a1, a2 } = HP;
    const st = this.state;
    for (let i = 0; i < pcm.length; i++) {
      const x = pcm[i]!;
      let v = x;
      for (let s = 0; s < SECTIONS; s++) {
        const o = s * 4;
        const y = b0 * v + b1 * st[o]! + b2 * st[o + 1]! - a1 * st[o + 2]! - a2 * st[o + 3]!;
        st[o + 1] = st[o]!;
        st[o] = v;
        st[o + 3] = st[o + 2]!;
        st[o + 2] = y;
        v = y;
      }
      if (x > FLOOR || x < -FLOOR) {
        this.high += v * v;
        this.all += x * x;
        this.counted += 1;
      }
    }
  }

  /** High-band energy relative to all, in dB (NaN before any audio above the floor). */
  get highBandDb(): number {
    return this.all > 0 ? 10 * Math.log10(this.high / this.all + 1e-12) : Number.NaN;
  }

  get verdict(): 'narrow' | 'wide' | null {
    if (this.counted < MIN_SAMPLES) return null;
    return this.highBandDb < NARROW_BAND_DB ? 'narrow' : 'wide';
  }
}

interface MapFile {
  /** CEPSTRA rows of CEPSTRA + 1 weights: out[o] = sum_c w[o][c] * in[c] + w[o][CEPSTRA]. */
  weights: number[][];
}

/**
 * An affine map of each frame's cepstra (13 -> 13), fitted by least squares on the training voices'
 * speech in both bands (training/telephone-map.ts writes `telephone-map.json`, with how it was made).
 */
export class TelephoneMap {
  private constructor(private readonly w: Float64Array) {}

  static load(modelDir: URL = MODEL_DIR): TelephoneMap {
    const file = JSON.parse(readFileSync(new URL('telephone-map.json', modelDir), 'utf8')) as MapFile;
    const rows = file.weights;
    if (rows.length !== CEPSTRA || rows.some((r) => r.length !== CEPSTRA + 1 || r.some((v) => !Number.isFinite(v))))
      throw new Error(`telephone-map.json: expected ${CEPSTRA} rows of ${CEPSTRA + 1} finite weights`);
    return new TelephoneMap(Float64Array.from(rows.flat()));
  }

  apply(cep: Float32Array): Float32Array {
    const out = new Float32Array(cep.length);
    const w = this.w;
    const width = CEPSTRA + 1;
    for (let t = 0; t < cep.length; t += CEPSTRA) {
      for (let o = 0; o < CEPSTRA; o++) {
        const row = o * width;
        let sum = w[row + CEPSTRA]!;
        for (let c = 0; c < CEPSTRA; c++) sum += w[row + c]! * cep[t + c]!;
        out[t + o] = sum;
      }
    }
    return out;
  }
}
