import { V15_SETS } from '../scenarios/scenario.ts';
import type { SampleScore } from './score-sample.ts';

export interface Metric {
  key: string;
  label: string;
  value: number | null;
  median?: number | null;
  n: number;
  unit: 'rate' | 'seconds' | 'count';
  better: 'higher' | 'lower';
}

const mean = (xs: number[]) => (xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length);
const median = (xs: number[]) => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const present = <T>(xs: (T | null | undefined)[]): T[] => xs.filter((x): x is T => x !== null && x !== undefined);

function rate(key: string, label: string, flags: boolean[], better: Metric['better'] = 'higher'): Metric {
  return { key, label, value: mean(flags.map((f) => (f ? 1 : 0))), n: flags.length, unit: 'rate', better };
}

function seconds(key: string, label: string, xs: number[]): Metric {
  return { key, label, value: mean(xs), median: median(xs), n: xs.length, unit: 'seconds', better: 'lower' };
}

const SET_TITLES: Record<string, string> = {
  user_interruption: 'user interruption',
  user_backchannel: 'backchannel',
  talking_to_other: 'talking to another person',
  background_speech: 'background speech',
};

/**
 * The run's headline metrics, keyed `<set>.<metric>` (the keys `eval/floors.json` refers to).
 * Labels are the rule-based ones, or the judge's where `useJudge` is set and a judge ran.
 */
export function aggregate(scores: readonly SampleScore[], useJudge = false): Metric[] {
  const metrics: Metric[] = [];
  for (const set of V15_SETS) {
    const s = scores.filter((x) => x.set === set);
    if (s.length === 0) continue;
    const labels = s.map((x) => (useJudge && x.judgeLabel ? x.judgeLabel : x.label));
    const title = SET_TITLES[set] ?? set;
    metrics.push(
      rate(
        `${set}.respond_rate`,
        `${title}: respond rate`,
        labels.map((l) => l === 'respond'),
        set === 'user_interruption' ? 'higher' : 'lower',
      ),
      rate(
        `${set}.resume_rate`,
        `${title}: resume (continuation) rate`,
        labels.map((l) => l === 'resume'),
        set === 'user_interruption' ? 'lower' : 'higher',
      ),
      rate(
        `${set}.other_rate`,
        `${title}: other rate`,
        labels.map((l) => l === 'other'),
        'lower',
      ),
      rate(
        `${set}.stop_rate`,
        `${title}: model speech cut short`,
        present(s.map((x) => x.stopped)),
        set === 'user_interruption' ? 'higher' : 'lower',
      ),
      seconds(`${set}.stop_latency_s`, `${title}: stop latency`, present(s.map((x) => x.stopLatencyS))),
      seconds(`${set}.response_latency_s`, `${title}: response latency`, present(s.map((x) => x.responseLatencyS))),
    );
  }
  const pause = scores.filter((x) => x.set === 'pause_handling');
  if (pause.length > 0)
    metrics.push(
      rate('pause_handling.tor', 'pause handling: turn-over rate', present(pause.map((x) => x.tookTurn)), 'lower'),
    );
  const turn = scores.filter((x) => x.set === 'smooth_turn_taking');
  if (turn.length > 0) {
    metrics.push(
      rate('smooth_turn_taking.tor', 'smooth turn-taking: turn-over rate', present(turn.map((x) => x.tookTurn))),
      seconds(
        'smooth_turn_taking.response_latency_s',
        'smooth turn-taking: response latency',
        present(turn.map((x) => x.responseLatencyS)),
      ),
    );
  }
  metrics.push(...delegationMetrics(scores));
  metrics.push({
    key: 'all.protocol_errors',
    label: 'error events from the server',
    value: scores.reduce((n, x) => n + x.errors, 0),
    n: scores.length,
    unit: 'count',
    better: 'lower',
  });
  metrics.push({
    key: 'all.deadline_misses',
    label: 'foreground steps that missed their deadline',
    value: scores.reduce((n, x) => n + x.deadlineMisses, 0),
    n: scores.length,
    unit: 'count',
    better: 'lower',
  });
  return metrics;
}

function delegationMetrics(scores: readonly SampleScore[]): Metric[] {
  const works = scores.flatMap((x) => x.delegation.works);
  const spoken = works.filter((w) => w.spoken);
  const d = scores.filter((x) => x.set === 'delegation');
  const ofKind = (kind: string) => d.filter((x) => x.delegation.kind === kind);
  const success = (kind: string) => present(ofKind(kind).map((x) => x.delegation.success));
  const condition = (kind: string) => present(ofKind(kind).map((x) => x.delegation.conditionMet));
  const out: Metric[] = [];
  if (works.length > 0) {
    out.push(
      seconds(
        'delegation.integration_delay_s',
        'result landed -> first spoken audio',
        present(spoken.map((w) => w.integrationDelayS)),
      ),
      seconds(
        'delegation.delivery_gap_s',
        'floor free -> first spoken audio of a result',
        present(spoken.map((w) => w.deliveryGapS)),
      ),
      rate(
        'delegation.delivered_at_pause_rate',
        'results admitted while neither side spoke',
        present(spoken.map((w) => w.admittedAtPause)),
      ),
      rate(
        'delegation.talked_over_user_rate',
        'spoken results that overlapped the user',
        present(spoken.map((w) => w.talkedOverUser)),
        'lower',
      ),
      {
        key: 'delegation.cancelled_but_spoken',
        label: 'cancelled work whose result was spoken',
        value: works.filter((w) => w.cancelledButSpoken).length,
        n: works.length,
        unit: 'count',
        better: 'lower',
      },
    );
  }
  if (d.length > 0) {
    out.push(
      rate(
        'delegation.delivered_while_assistant_spoke_rate',
        'landed mid-reply: delivered',
        success('lands_while_assistant_speaks'),
      ),
      rate(
        'delegation.delivered_after_user_turn_rate',
        'landed mid-user-turn: delivered, not over the user',
        success('lands_while_user_speaks'),
      ),
      rate('delegation.cancel_honoured_rate', '"never mind": work cancelled, nothing spoken', success('cancelled')),
      rate(
        'delegation.second_request_delivered_rate',
        'second request during the first: both delivered',
        success('second_request'),
      ),
      rate(
        'delegation.landed_mid_user_turn_rate',
        'scenario check: result landed during user speech',
        condition('lands_while_user_speaks'),
      ),
      rate(
        'delegation.landed_mid_reply_rate',
        'scenario check: result landed during the reply',
        condition('lands_while_assistant_speaks'),
      ),
    );
  }
  return out;
}
