import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startEmbeddedRuntime } from '../embedded/embedded-runtime.ts';
import { checkFloors, type FloorCheck, type Floors } from './floors.ts';
import { type RunInfo, writeReport } from './report/write-report.ts';
import { Progress } from './runner/progress.ts';
import { type EvalTarget, runAll } from './runner.ts';
import { loadSamples } from './scenarios/fdb-loader.ts';
import { generateSuite } from './scenarios/generate.ts';
import type { EvalSet, Sample } from './scenarios/scenario.ts';
import type { JudgeConfig } from './scorer/llm-judge.ts';
import { type RunScore, scoreRun } from './scorer/score-run.ts';

export interface EvaluationOptions {
  /** Everything goes under here: data/, runs/, report.md, charts, scores.json. */
  outDir: string;
  /** Samples per set (synthetic data), or the most per set taken from `data`. */
  perSet?: number;
  perSetOverrides?: Partial<Record<EvalSet, number>>;
  sets?: readonly EvalSet[];
  seed?: string;
  /** Full-Duplex-Bench v1.5 folders (or ours) to run instead of generating. */
  data?: string;
  dataSet?: EvalSet;
  /** Another endpoint; without it the embedded runtime is started in this process on port 0. */
  url?: string;
  apiKey?: string;
  venus?: EvalTarget['venus'];
  session?: Record<string, unknown>;
  chunkMs?: number;
  frameMs?: number;
  /** Send the microphone as 8 kHz mu-law (a phone line), so the model hears telephone-band audio. */
  telephone?: boolean;
  concurrency?: number;
  /**
   * Hand the model each utterance's transcript `asrDelayS` after it ends (a client-ASR stand-in for
   * models that cannot hear words). Default false: audio only, the model hears for itself.
   */
  transcripts?: boolean;
  asrDelayS?: number;
  judge?: JudgeConfig;
  floors?: Floors | null;
  /** Check timing bounds too (the CLI does; the test slice does not). */
  timingFloors?: boolean;
  quiet?: boolean;
  /** Score the runs already under `outDir/runs` again (after a scorer change) instead of running. */
  rescore?: boolean;
}

export interface EvaluationResult {
  score: RunScore;
  info: RunInfo;
  floors: FloorCheck[] | null;
  report: string;
}

function take(samples: Sample[], sets: readonly EvalSet[] | undefined, perSet: number | undefined): Sample[] {
  const counts = new Map<string, number>();
  return samples.filter((s) => {
    const set = s.meta.venus_eval.set;
    if (sets && !sets.includes(set)) return false;
    const c = counts.get(set) ?? 0;
    counts.set(set, c + 1);
    return perSet === undefined || c < perSet;
  });
}

/**
 * The whole evaluation: generate (or load) samples, stream them through the endpoint in real time,
 * score them and write the report. Used by `npm run eval` and by the test slice.
 *
 * @example
 *   const { score } = await runEvaluation({ outDir: 'out/eval', perSet: 20 });
 */
export async function runEvaluation(options: EvaluationOptions): Promise<EvaluationResult> {
  const log = (line: string) => {
    if (!options.quiet) console.log(line);
  };
  const asrDelayS = options.asrDelayS ?? 0.5;
  const frameMs = options.frameMs ?? 40;
  const concurrency = options.concurrency ?? 8;
  const samples = options.data
    ? take(
        loadSamples(options.data, {
          asrDelayS,
          ...(options.dataSet ? { set: options.dataSet } : {}),
          ...(options.transcripts === false ? { transcripts: false } : {}),
        }),
        options.sets,
        options.perSet,
      )
    : await generateSuite({
        outDir: path.join(options.outDir, 'data'),
        perSet: options.perSet ?? 20,
        ...(options.perSetOverrides ? { perSetOverrides: options.perSetOverrides } : {}),
        ...(options.sets ? { sets: options.sets } : {}),
        ...(options.seed ? { seed: options.seed } : {}),
        asrDelayS,
      });
  log(`[eval] ${samples.length} samples from ${options.data ?? path.join(options.outDir, 'data')}`);

  const runRoot = path.join(options.outDir, 'runs');
  const runFile = path.join(runRoot, 'run.json');
  let run: Omit<RunInfo, 'samples' | 'data' | 'asrDelayS' | 'transcripts'>;
  if (options.rescore) {
    run = JSON.parse(readFileSync(runFile, 'utf8')) as typeof run;
  } else {
    run = await runSamples(samples, options, runRoot, frameMs, concurrency);
    writeFileSync(runFile, JSON.stringify(run, null, 1));
  }
  log(`[eval] scoring the runs under ${runRoot}`);
  const score = await scoreRun(samples, runRoot, options.judge);
  const floors = options.floors ? checkFloors(score.metrics, options.floors, options.timingFloors ?? true) : null;
  const info: RunInfo = {
    ...run,
    data: options.data ? `${options.data} (loaded)` : `synthetic, seed "${options.seed ?? 'venus-eval'}"`,
    asrDelayS,
    transcripts: options.transcripts ?? false,
    samples: samples.length,
  };
  const report = writeReport(options.outDir, score, info, floors);
  return { score, info, floors, report };
}

/** Streams the samples through the endpoint (the embedded runtime unless `url` is set). */
async function runSamples(
  samples: readonly Sample[],
  options: EvaluationOptions,
  runRoot: string,
  frameMs: number,
  concurrency: number,
): Promise<Omit<RunInfo, 'samples' | 'data' | 'asrDelayS' | 'transcripts'>> {
  // VENUS_MODEL and friends pick the model as they do for `npm start`; the reference model by default.
  const runtime = options.url ? null : await startEmbeddedRuntime({ port: 0, modelEnv: process.env });
  const caps = runtime ? await runtime.model.capabilities() : null;
  // Unset: the server's default chunk (1000 ms), as a client that does not ask gets it.
  const chunkMs = options.chunkMs;
  const target: EvalTarget = {
    url: options.url ?? `${runtime!.url.replace(/^http/, 'ws')}/v1/realtime`,
    venus: options.venus ?? 'auto',
    ...(options.apiKey ? { apiKey: options.apiKey } : {}),
    ...(options.session ? { session: options.session } : {}),
    ...(chunkMs === undefined ? {} : { chunkMs }),
    ...(options.telephone ? { telephone: true } : {}),
  };
  rmSync(runRoot, { recursive: true, force: true });
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const progress = options.quiet ? null : new Progress('samples', samples.length);
  try {
    const result = await runAll(samples, target, {
      outRoot: runRoot,
      concurrency,
      frameMs,
      transcripts: options.transcripts ?? false,
      onProgress: (done, _total, _last, failed) => progress?.update(done, failed),
    });
    return {
      target: caps
        ? `the embedded runtime (model ${caps.model} ${caps.modelRevision}, built-in functions)`
        : options.url!,
      chunkMs: chunkMs ?? null,
      frameMs,
      ...(options.telephone ? { telephone: true } : {}),
      concurrency,
      failures: result.failures,
      wallS: result.wallS,
      loopDelayMs: { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 },
      date: new Date().toISOString().slice(0, 19).replace('T', ' '),
    };
  } finally {
    loop.disable();
    progress?.end();
    await runtime?.close();
  }
}
