import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { readSample, writeSample } from './sample-store.ts';
import { EVAL_SETS, type EvalSet, type Sample, V15_SETS } from './scenario.ts';
import { ScenarioBuilder } from './scenario-builder.ts';
import { SeededRandom } from './seeded-random.ts';
import {
  delegationSample,
  drawSample,
  type GeneratedSample,
  pauseSample,
  turnSample,
  v15Sample,
} from './set-generators.ts';
import { VoiceBank } from './voice-bank.ts';

export interface GenerateOptions {
  outDir: string;
  /** Samples per set; a per-set override wins. */
  perSet: number;
  perSetOverrides?: Partial<Record<EvalSet, number>>;
  sets?: readonly EvalSet[];
  seed?: string;
  /** When the simulated client ASR sends an utterance's text, after the utterance ends. Default 0.5 s. */
  asrDelayS?: number;
}

/** Bumped whenever generation changes, so cached samples from an older generator are rebuilt. */
export const GENERATOR_VERSION = 1;

function countFor(set: EvalSet, options: GenerateOptions): number {
  return options.perSetOverrides?.[set] ?? options.perSet;
}

async function generateOne(
  set: EvalSet,
  index: number,
  options: GenerateOptions,
  bank: VoiceBank,
): Promise<GeneratedSample> {
  const id = `${set}_${String(index).padStart(3, '0')}`;
  const rng = new SeededRandom(`${options.seed ?? 'venus-eval'}:${set}:${index}`);
  const builder = new ScenarioBuilder(bank, options.asrDelayS ?? 0.5);
  const d = drawSample(rng, index, id);
  if ((V15_SETS as readonly string[]).includes(set)) return v15Sample(set, builder, d);
  if (set === 'pause_handling') return pauseSample(builder, d);
  if (set === 'smooth_turn_taking') return turnSample(builder, d);
  return delegationSample(builder, d);
}

/**
 * Builds (or reuses) the synthetic suite under `outDir/<set>/<id>/`. Generation is deterministic
 * in (seed, set, index, generator version, ASR delay), so a manifest with the same parameters
 * means the folders on disk are what generation would produce, and they are read back instead.
 *
 * @example
 *   const samples = await generateSuite({ outDir: 'out/eval/data', perSet: 20 });
 */
export async function generateSuite(options: GenerateOptions): Promise<Sample[]> {
  const sets = options.sets ?? EVAL_SETS;
  const manifest = {
    version: GENERATOR_VERSION,
    seed: options.seed ?? 'venus-eval',
    asrDelayS: options.asrDelayS ?? 0.5,
    samples: sets.flatMap((set) =>
      Array.from({ length: countFor(set, options) }, (_, i) => `${set}/${set}_${String(i).padStart(3, '0')}`),
    ),
  };
  const manifestFile = path.join(options.outDir, 'manifest.json');
  if (existsSync(manifestFile) && readFileSync(manifestFile, 'utf8') === JSON.stringify(manifest)) {
    return manifest.samples.map((key) => readSample(path.join(options.outDir, key)));
  }
  rmSync(options.outDir, { recursive: true, force: true });
  const bank = await VoiceBank.create();
  const samples: Sample[] = [];
  try {
    for (const set of sets) {
      for (let i = 0; i < countFor(set, options); i++) {
        const generated = await generateOne(set, i, options, bank);
        const dir = path.join(options.outDir, set, generated.meta.venus_eval.id);
        writeSample(dir, generated);
        samples.push({ dir, meta: generated.meta, input: generated.input });
      }
    }
  } finally {
    bank.close();
  }
  writeFileSync(manifestFile, JSON.stringify(manifest));
  return samples;
}
