import { existsSync } from 'node:fs';
import path from 'node:path';
import { readWav } from '../audio/wav-io.ts';
import type { Sample } from '../scenarios/scenario.ts';
import { aggregate, type Metric } from './aggregate.ts';
import { type JudgeConfig, judgeBehaviour } from './llm-judge.ts';
import { readSampleRecord } from './sample-record.ts';
import { type SampleScore, scoreSample } from './score-sample.ts';
import { MERGE_GAP_S, speechProbabilities, speechSegments } from './speech-segments.ts';

export interface RunScore {
  samples: SampleScore[];
  metrics: Metric[];
  /** Samples with no complete run on disk. */
  missing: string[];
  judged: boolean;
}

/**
 * Scores every sample that has a run under `runRoot/<set>/<id>/`: Silero VAD over each input.wav
 * (user, pauses ≤ 0.6 s merged) and output.wav (model, ≤ 0.5 s merged), the rule-based behaviour
 * labels and timing per sample, then the run's metrics. With a judge, v1.5 samples are also
 * labelled by the LLM and the metrics use its labels.
 *
 * @example
 *   const score = await scoreRun(samples, 'out/eval/runs');
 */
export async function scoreRun(samples: readonly Sample[], runRoot: string, judge?: JudgeConfig): Promise<RunScore> {
  const present: { sample: Sample; dir: string }[] = [];
  const missing: string[] = [];
  for (const sample of samples) {
    const { set, id } = sample.meta.venus_eval;
    const dir = path.join(runRoot, set, id);
    if (existsSync(path.join(dir, 'playout.json'))) present.push({ sample, dir });
    else missing.push(`${set}/${id}`);
  }
  const signals = present.flatMap(({ sample, dir }) => [sample.input, readWav(path.join(dir, 'output.wav'))]);
  const probabilities = await speechProbabilities(signals);
  const scores = present.map(({ sample, dir }, i) => {
    const user = speechSegments(probabilities[2 * i]!, MERGE_GAP_S.user);
    const model = speechSegments(probabilities[2 * i + 1]!, MERGE_GAP_S.model);
    return scoreSample(sample, readSampleRecord(dir), user, model);
  });
  if (judge) {
    for (const s of scores) {
      if (!s.judgeInput) continue;
      try {
        s.judgeLabel = await judgeBehaviour(judge, s.judgeInput);
      } catch {
        // A failing judge call leaves the rule-based label in charge of this sample.
      }
    }
  }
  return { samples: scores, metrics: aggregate(scores, judge !== undefined), missing, judged: judge !== undefined };
}
