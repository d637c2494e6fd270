import type { Sample } from '../scenarios/scenario.ts';
import { V15_SETS } from '../scenarios/scenario.ts';
import { type Behaviour, classifyOverlap } from './behaviour.ts';
import { type DelegationOutcome, delegationOutcome } from './delegation-metrics.ts';
import type { JudgeInput } from './llm-judge.ts';
import type { SampleRecord } from './sample-record.ts';
import type { SpeechSegment } from './speech-segments.ts';
import { responseLatency, stopLatency, tookTurnInPause, turnTaking, userEnd, wordsPerSecond } from './turn-metrics.ts';

export interface SampleScore {
  key: string;
  set: Sample['meta']['venus_eval']['set'];
  expected: Sample['meta']['venus_eval']['expected'];
  /** v1.5 sets: the rule-based label (and the judge's, when one ran). */
  label: Behaviour | null;
  rule: string | null;
  judgeLabel?: Behaviour;
  /** The model's speech was cut short by the overlap. */
  stopped: boolean | null;
  stopLatencyS: number | null;
  responseLatencyS: number | null;
  /** v1 sets: whether the model took the turn (in the pause, or after the turn). */
  tookTurn: boolean | null;
  delegation: DelegationOutcome;
  errors: number;
  deadlineMisses: number;
  judgeInput?: JudgeInput;
}

const isV15 = (set: string) => (V15_SETS as readonly string[]).includes(set);

/** Scores one run from its record and the speech segments of its input (user) and output (model). */
export function scoreSample(
  sample: Sample,
  record: SampleRecord,
  user: readonly SpeechSegment[],
  model: readonly SpeechSegment[],
): SampleScore {
  const plan = sample.meta.venus_eval;
  const [t0, t1] = sample.meta.timestamps;
  const rate = wordsPerSecond(record);
  const score: SampleScore = {
    key: `${plan.set}/${plan.id}`,
    set: plan.set,
    expected: plan.expected,
    label: null,
    rule: null,
    stopped: null,
    stopLatencyS: null,
    responseLatencyS: null,
    tookTurn: null,
    delegation: delegationOutcome(record, plan.delegation?.kind ?? null, user),
    errors: record.errors,
    deadlineMisses: record.deadlineMisses,
  };
  if (isV15(plan.set)) {
    const verdict = classifyOverlap(record, t0, t1);
    score.label = verdict.label;
    score.rule = verdict.rule;
    score.stopped = verdict.cutAt !== null;
    if (verdict.cutAt !== null) score.stopLatencyS = stopLatency(model, t0) ?? Math.max(0, verdict.cutAt - t0);
    if (verdict.label === 'respond') {
      const end = userEnd(user, t0, t1);
      score.responseLatencyS = responseLatency(model, end, verdict.cutAt ?? t0);
    }
    score.judgeInput = {
      set: plan.set,
      context: sample.meta.context_text,
      overlap: sample.meta.current_turn_text,
      before: verdict.active ? heardBefore(verdict.active.transcript, verdict.active, t0) : '',
      after: verdict.rule === 'through' ? (verdict.active?.transcript ?? '') : (verdict.next?.transcript ?? ''),
    };
  } else if (plan.set === 'pause_handling') {
    score.tookTurn = tookTurnInPause(model, t0, t1, rate);
  } else if (plan.set === 'smooth_turn_taking') {
    const end = userEnd(user, t0, t1);
    const turn = turnTaking(model, end, t0, rate);
    score.tookTurn = turn.tookTurn;
    score.responseLatencyS = turn.latencyS;
  }
  return score;
}

/** The part of a response's text heard by `t`, by the share of its audio played by then. */
function heardBefore(text: string, r: { playStart: number | null; playedS: number }, t: number): string {
  if (r.playStart === null || r.playedS <= 0) return '';
  const share = Math.min(1, Math.max(0, (t - r.playStart) / r.playedS));
  return text.slice(0, Math.round(text.length * share));
}
