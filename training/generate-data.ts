/**
 * `npm run train:data`: the overlap clips and their feature table, reproducible from a seed.
 *
 *   npm run train:data                          # 200 eSpeak + 60 Festival train, 20 held-out clips per class
 *   npm run train:data -- --train 20 --festival 4 --heldout 8 --out out/training-smoke
 *
 * Writes `<out>/features.csv` (one row per 80 ms decision point of each clip's overlapping burst,
 * FEATURE_NAMES columns) and `<out>/clips.csv` (one row per clip: how it was made, whether its
 * burst was heard, and the v1 rules' verdict).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SeededRandom } from '../eval/scenarios/seeded-random.ts';
import { FEATURE_NAMES } from '../gpu-worker/src/perception/overlap-features.ts';
import { SileroVad } from '../gpu-worker/src/perception/silero-vad.ts';
import { SpeechEmbedding } from '../gpu-worker/src/perception/speech-embedding.ts';
import { planClip, renderClip } from './clips.ts';
import { ClipExtractor } from './extract.ts';
import { CLASSES } from './phrases.ts';
import { festivalAvailable, fliteAvailable, SpeechBank } from './speech-bank.ts';

const { values } = parseArgs({
  options: {
    train: { type: 'string', default: '200' },
    heldout: { type: 'string', default: '20' },
    /** Training clips per class in Festival voices (the second training engine), ids `train-festival-*`. */
    festival: { type: 'string', default: '60' },
    seed: { type: 'string', default: 'venus-overlap-1' },
    out: { type: 'string', default: 'out/training' },
  },
});
const flite = fliteAvailable();
if (!flite) console.warn('flite is not installed: the held-out set has eSpeak voices only');
const festival = festivalAvailable();
if (!festival) console.warn('festival (festvox-kdlpc16k) is not installed: the training set has eSpeak voices only');
/** Each pass: its clips' split, its own random stream (so adding a pass changes no other clip), clips per class. */
const passes = [
  { split: 'train', name: 'train', festival: false, perClass: Number(values.train) },
  { split: 'train', name: 'train-festival', festival: true, perClass: festival ? Number(values.festival) : 0 },
  { split: 'heldout', name: 'heldout', festival: false, perClass: Number(values.heldout) },
] as const;

const bank = await SpeechBank.create();
const vad = await SileroVad.create({ maxBatch: 1, intraOpNumThreads: 1 });
const embedding = await SpeechEmbedding.create({ maxBatch: 64, intraOpNumThreads: 1 });
const extractor = await ClipExtractor.create(vad, embedding);
const features = [['clip', 'split', 'class', 'elapsed_ms', ...FEATURE_NAMES].join(',')];
const clips = [
  [
    'clip',
    'split',
    'class',
    'engine',
    'voice',
    'telephone',
    'echo',
    'level_vs_user_db',
    'heard',
    'onset_ms',
    'rule_action',
    'rule_cause',
    'rule_elapsed_ms',
    'text',
  ].join(','),
];
const started = performance.now();
let done = 0;
for (const pass of passes) {
  const { split } = pass;
  const rng = new SeededRandom(`${values.seed}/${pass.name}`);
  for (let i = 0; i < pass.perClass; i++) {
    for (const cls of CLASSES) {
      const id = `${pass.name}-${cls}-${i}`;
      const plan = planClip(rng, id, split, cls, flite, pass.festival);
      const clip = await renderClip(bank, plan, rng);
      const r = await extractor.run(clip);
      for (const row of r.rows)
        features.push([id, split, cls, row.elapsedMs, ...Array.from(row.features, (v) => v.toFixed(5))].join(','));
      clips.push(
        [
          id,
          split,
          cls,
          plan.overlapSpeaker.engine,
          plan.overlapSpeaker.voice,
          plan.telephone ? 1 : 0,
          plan.echoDb === null ? 0 : 1,
          (plan.overlapDb - plan.userDb).toFixed(1),
          r.heard ? 1 : 0,
          Math.round(r.onsetMs),
          r.rules?.verdict.action ?? '',
          r.rules?.verdict.cause ?? '',
          r.rules ? Math.round(r.rules.elapsedMs) : '',
          JSON.stringify(plan.overlapText).replaceAll(',', ';'),
        ].join(','),
      );
      done += 1;
      if (done % 40 === 0) console.log(`${done} clips, ${((performance.now() - started) / 1000).toFixed(0)} s`);
    }
  }
}
mkdirSync(values.out, { recursive: true });
writeFileSync(join(values.out, 'features.csv'), `${features.join('\n')}\n`);
writeFileSync(join(values.out, 'clips.csv'), `${clips.join('\n')}\n`);
console.log(
  `${done} clips, ${features.length - 1} rows -> ${values.out} in ${((performance.now() - started) / 1000).toFixed(0)} s`,
);
bank.close();
await vad.close();
await embedding.close();
