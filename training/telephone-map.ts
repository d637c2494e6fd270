/**
 * Fits the recogniser's telephone-band map (gpu-worker/src/perception/pocketsphinx/telephone-band.ts)
 * and writes gpu-worker/models/pocketsphinx/telephone-map.json.
 *
 * Data: the 48 training eSpeak NG voices (training/phrases.ts TRAIN_SPEAKERS; none of them is an
 * evaluation voice, and Flite is not used) each say PER_VOICE of the training phrases with training
 * cities, at a level drawn from -34 to -18 dBFS. Every clip is passed once as it is and once through
 * the 8 kHz mu-law round trip (`telephone`, the edge's G.711). PocketSphinx's own front end (the
 * shipped model's feat.params, voice activity detection off so both bands give the same frames)
 * turns both into cepstra; the map is the ridge least-squares affine map from each telephone frame
 * to the same frame in the full band. The last HOLD_OUT share of clips (by voice order) is kept out
 * of the fit to report the error; the written map is then refitted on all clips.
 *
 * Usage: npm run train:telephone-map [-- --seed S]   (about half a minute on 2 cores)
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { normalizeTo, toPcm16 } from '../eval/audio/signal.ts';
import { SeededRandom } from '../eval/scenarios/seeded-random.ts';
import { DEMO_GRAMMAR } from '../gpu-worker/src/perception/pocketsphinx/demo-vocabulary.ts';
import { compileGrammar } from '../gpu-worker/src/perception/pocketsphinx/grammar-from-vocabulary.ts';
import { CEPSTRA, MODEL_DIR, PocketSphinxWasm } from '../gpu-worker/src/perception/pocketsphinx/pocketsphinx-wasm.ts';
import { Pronunciations } from '../gpu-worker/src/perception/pocketsphinx/pronunciations.ts';
import { DECODER_OPTIONS } from '../gpu-worker/src/perception/pocketsphinx/recogniser-protocol.ts';
import { telephone } from './mix.ts';
import { fillCity, TRAIN_CITIES, TRAIN_PHRASES, TRAIN_SPEAKERS } from './phrases.ts';
import { SpeechBank } from './speech-bank.ts';

const PER_VOICE = 14;
const HOLD_OUT = 0.15;
/** Ridge penalty per frame (the features are raw cepstra, c0 around 40-70). */
const RIDGE = 0.1;
const WIDTH = CEPSTRA + 1;

const { values } = parseArgs({ options: { seed: { type: 'string', default: 'telephone-map' } } });
const seed = values.seed!;
const rng = new SeededRandom(seed);
const ps = await PocketSphinxWasm.load();
const pronunciations = Pronunciations.load(MODEL_DIR);
const grammar = compileGrammar(DEMO_GRAMMAR, (w) => pronunciations.has(w));
const decoder = ps.openGrammar(
  grammar.jsgf,
  `${DECODER_OPTIONS} -remove_silence no`,
  pronunciations.dictionaryFor(grammar.words),
);
const bank = await SpeechBank.create();
const texts = [...TRAIN_PHRASES.context, ...Object.values(TRAIN_PHRASES.lines).flat()];

const pairs: Array<{ narrow: Float32Array; wide: Float32Array }> = [];
const started = Date.now();
for (const speaker of TRAIN_SPEAKERS) {
  for (let k = 0; k < PER_VOICE; k++) {
    const text = fillCity(rng.pick(texts), rng.pick(TRAIN_CITIES));
    const wide = normalizeTo(await bank.speech(text, speaker), rng.uniform(-34, -18));
    const narrow = telephone(wide).subarray(0, wide.length);
    const padded = (x: Float32Array) => {
      const pcm = new Int16Array(x.length + 16 * 400);
      pcm.set(toPcm16(x), 16 * 200);
      return pcm;
    };
    const w = ps.cepstra(decoder, padded(wide), true, true);
    const n = ps.cepstra(decoder, padded(narrow), true, true);
    if (w.length !== n.length) throw new Error(`frame counts differ (${w.length / CEPSTRA} vs ${n.length / CEPSTRA})`);
    pairs.push({ narrow: n, wide: w });
  }
}
ps.free(decoder);
bank.close();

const cut = Math.round(pairs.length * (1 - HOLD_OUT));
const fitted = fitMap(pairs.slice(0, cut));
const before = meanSquaredError(pairs.slice(cut), null);
const after = meanSquaredError(pairs.slice(cut), fitted);
const weights = fitMap(pairs);
const frames = pairs.reduce((n, p) => n + p.narrow.length / CEPSTRA, 0);
const out = new URL('telephone-map.json', MODEL_DIR);
writeFileSync(
  out,
  `${JSON.stringify(
    {
      about:
        'Affine map of PocketSphinx cepstra (13 per frame, the shipped en-us feat.params) from 8 kHz mu-law telephone-band speech to the same speech at 16 kHz. Written by training/telephone-map.ts.',
      licence:
        'Apache-2.0, as the repository (numbers fitted by us on speech we synthesised with eSpeak NG; see LICENSES.md)',
      seed,
      voices: TRAIN_SPEAKERS.length,
      clips: pairs.length,
      frames,
      ridgePerFrame: RIDGE,
      heldOutMeanSquaredError: { identity: round(before), mapped: round(after) },
      weights: weights.map((row) => row.map((v) => Number(v.toPrecision(7)))),
    },
    null,
    1,
  )}\n`,
);
console.log(
  `${pairs.length} clips, ${frames} frames in ${Math.round((Date.now() - started) / 1000)} s; held-out mean squared error per cepstrum ${round(before)} as they are -> ${round(after)} mapped; wrote ${out.pathname}`,
);
process.exit(0);

/** Ridge least squares: CEPSTRA rows of WIDTH weights (the last one the offset). */
function fitMap(data: typeof pairs): number[][] {
  const ata = new Float64Array(WIDTH * WIDTH);
  const atb = new Float64Array(WIDTH * CEPSTRA);
  const x = new Float64Array(WIDTH);
  let n = 0;
  for (const { narrow, wide } of data) {
    for (let t = 0; t < narrow.length; t += CEPSTRA) {
      for (let c = 0; c < CEPSTRA; c++) x[c] = narrow[t + c]!;
      x[CEPSTRA] = 1;
      for (let i = 0; i < WIDTH; i++) {
        for (let j = 0; j < WIDTH; j++) ata[i * WIDTH + j]! += x[i]! * x[j]!;
        for (let o = 0; o < CEPSTRA; o++) atb[i * CEPSTRA + o]! += x[i]! * wide[t + o]!;
      }
      n++;
    }
  }
  for (let i = 0; i < WIDTH; i++) ata[i * WIDTH + i]! += RIDGE * n;
  return Array.from({ length: CEPSTRA }, (_, o) =>
    solve(
      ata,
      Array.from({ length: WIDTH }, (_, i) => atb[i * CEPSTRA + o]!),
    ),
  );
}

/** Gaussian elimination with partial pivoting on a copy of the WIDTH x WIDTH system. */
function solve(matrix: Float64Array, rhs: number[]): number[] {
  const a = Array.from({ length: WIDTH }, (_, i) => [...matrix.subarray(i * WIDTH, (i + 1) * WIDTH), rhs[i]!]);
  for (let col = 0; col < WIDTH; col++) {
    let pivot = col;
    for (let r = col + 1; r < WIDTH; r++) if (Math.abs(a[r]![col]!) > Math.abs(a[pivot]![col]!)) pivot = r;
    [a[col], a[pivot]] = [a[pivot]!, a[col]!];
    for (let r = 0; r < WIDTH; r++) {
      if (r === col) continue;
      const f = a[r]![col]! / a[col]![col]!;
      for (let c = col; c <= WIDTH; c++) a[r]![c]! -= f * a[col]![c]!;
    }
  }
  return a.map((row, i) => row[WIDTH]! / row[i]!);
}

function meanSquaredError(data: typeof pairs, weights: number[][] | null): number {
  let sum = 0;
  let count = 0;
  for (const { narrow, wide } of data) {
    for (let t = 0; t < narrow.length; t += CEPSTRA) {
      for (let o = 0; o < CEPSTRA; o++) {
        let y = narrow[t + o]!;
        if (weights) {
          const row = weights[o]!;
          y = row[CEPSTRA]!;
          for (let c = 0; c < CEPSTRA; c++) y += row[c]! * narrow[t + c]!;
        }
        sum += (y - wide[t + o]!) ** 2;
        count++;
      }
    }
  }
  return sum / count;
}

function round(v: number): number {
  return Math.round(v * 10) / 10;
}
