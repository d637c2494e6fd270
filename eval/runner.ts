import path from 'node:path';
import type { EvalTarget } from './runner/eval-client.ts';
import { type RunSampleOptions, runSample, type SampleRun } from './runner/run-sample.ts';
import type { Sample } from './scenarios/scenario.ts';

export type { EvalTarget } from './runner/eval-client.ts';

export interface RunAllOptions extends RunSampleOptions {
  /** Where each sample's outputs go: `<outRoot>/<set>/<id>/`. */
  outRoot: string;
  /** Samples streamed at once. */
  concurrency: number;
  /** Called after each sample (for a progress line). */
  onProgress?: (done: number, total: number, last: SampleRun | null, failed: number) => void;
}

export interface RunAllResult {
  runs: SampleRun[];
  failures: { key: string; error: string }[];
  wallS: number;
}

/**
 * Runs samples through an OpenAI-Realtime-compatible endpoint, `concurrency` sessions at a time.
 * Each session streams in real time, so wall time is about (total audio / concurrency). Starts are
 * staggered a little so the sessions' frames do not all fall on the same millisecond.
 *
 * @example
 *   const { runs } = await runAll(samples, { url, venus: 'auto' }, { outRoot: 'out/eval/runs', concurrency: 8 });
 */
export async function runAll(
  samples: readonly Sample[],
  target: EvalTarget,
  options: RunAllOptions,
): Promise<RunAllResult> {
  const started = performance.now();
  const runs: SampleRun[] = [];
  const failures: { key: string; error: string }[] = [];
  let next = 0;
  let done = 0;
  const worker = async (slot: number) => {
    await new Promise((r) => setTimeout(r, slot * 137));
    for (;;) {
      const sample = samples[next++];
      if (!sample) return;
      const { set, id } = sample.meta.venus_eval;
      const key = `${set}/${id}`;
      try {
        const run = await runSample(sample, target, path.join(options.outRoot, set, id), options);
        runs.push(run);
        done += 1;
        options.onProgress?.(done, samples.length, run, failures.length);
      } catch (err) {
        failures.push({ key, error: err instanceof Error ? err.message : String(err) });
        done += 1;
        options.onProgress?.(done, samples.length, null, failures.length);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, (_, i) => worker(i)));
  return { runs, failures, wallS: (performance.now() - started) / 1000 };
}
