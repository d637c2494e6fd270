import type { OverlapClass } from './phrases.ts';
import { CLASSES } from './phrases.ts';

/** What a policy did with one clip's overlap. */
export type Outcome = 'stop' | 'backchannel' | 'other_directed' | 'background' | 'undecided' | 'not heard';
const OUTCOMES: readonly Outcome[] = ['stop', 'backchannel', 'other_directed', 'background', 'undecided', 'not heard'];

export interface Scored {
  cls: OverlapClass;
  engine: string;
  telephone: boolean;
  /** `ms`: when the decision was made, from the overlap's true start (audio time). */
  rules: { outcome: Outcome; ms: number | null };
  head: { outcome: Outcome; ms: number | null };
}

type Policy = 'rules' | 'head';

/** The issue's targets: stop rate on interruptions, carry-on rate on the other classes. */
export const TARGETS: Record<OverlapClass, number> = {
  interruption: 0.9,
  backchannel: 0.98,
  other_directed: 0.9,
  background: 0.9,
};

const pct = (x: number) => `${Math.round(x * 100)}%`;

export function quantile(xs: number[], q: number): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

/** Stop rate on interruptions, carry-on rate on the rest. */
function rate(items: Scored[], policy: Policy, cls: OverlapClass): { value: number; n: number } {
  const of = items.filter((s) => s.cls === cls);
  const stops = of.filter((s) => s[policy].outcome === 'stop').length;
  return {
    value: of.length === 0 ? Number.NaN : cls === 'interruption' ? stops / of.length : 1 - stops / of.length,
    n: of.length,
  };
}

function confusion(items: Scored[], policy: Policy): string {
  const lines = [
    `| true \\ ${policy} | ${OUTCOMES.join(' | ')} |`,
    `| --- | ${OUTCOMES.map(() => '---:').join(' | ')} |`,
  ];
  for (const cls of CLASSES) {
    const of = items.filter((s) => s.cls === cls);
    lines.push(`| ${cls} | ${OUTCOMES.map((o) => of.filter((s) => s[policy].outcome === o).length).join(' | ')} |`);
  }
  return lines.join('\n');
}

function rates(items: Scored[]): string {
  const lines = ['| | n | target | rules | head |', '| --- | ---: | ---: | ---: | ---: |'];
  for (const cls of CLASSES) {
    const r = rate(items, 'rules', cls);
    const h = rate(items, 'head', cls);
    const label = cls === 'interruption' ? 'responds to interruptions' : `carries on through ${cls.replace('_', '-')}`;
    lines.push(`| ${label} | ${r.n} | ${pct(TARGETS[cls])} | ${pct(r.value)} | ${pct(h.value)} |`);
  }
  for (const policy of ['rules', 'head'] as const) {
    const ms = items
      .filter((s) => s.cls === 'interruption' && s[policy].outcome === 'stop')
      .map((s) => s[policy].ms ?? 0);
    lines.push(
      `| stop decision p50 / p90 (${policy}, ms after the overlap starts) | ${ms.length} | 250 / 400 | ${policy === 'rules' ? `${quantile(ms, 0.5)} / ${quantile(ms, 0.9)}` : ''} | ${policy === 'head' ? `${quantile(ms, 0.5)} / ${quantile(ms, 0.9)}` : ''} |`,
    );
  }
  return lines.join('\n');
}

function section(title: string, items: Scored[]): string {
  return [
    `### ${title} (${items.length} clips)`,
    '',
    rates(items),
    '',
    confusion(items, 'rules'),
    '',
    confusion(items, 'head'),
    '',
  ].join('\n');
}

export function formatReport(
  scored: Scored[],
  meta: { maxDiff: number; training: { recipe: object; data: object; train_row_accuracy: number }; command: string },
): string {
  const engines = [...new Set(scored.map((s) => s.engine))].sort();
  return [
    '# Overlap head: held-out evaluation',
    '',
    `Regenerate: \`npm run train:all\` (data, training, this report) or \`${meta.command}\` (this report from the committed model and a feature table).`,
    '',
    "Scored on the HELD-OUT clips only: the evaluation's own user and television voices and lines (`eval/scenarios/phrases.ts`) and Flite voices (an engine never used in training), audio only (no transcripts), 30% of them through an 8 kHz μ-law round trip. Each policy sees the same clip through the worker's own VAD, recogniser and feature code; decisions are in audio time at 80 ms decision points (the chunk delivery on top of this is measured by `npm run eval`).",
    '',
    'Columns: `stop` = the assistant stops (the floor is taken); `backchannel` / `other_directed` / `background` = it carries on, for that reason; `undecided` = heard but never judged; `not heard` = the VAD found no speech burst in the overlap (the assistant carries on).',
    '',
    section('All held-out clips', scored),
    ...engines.map((e) =>
      section(
        `Engine ${e}`,
        scored.filter((s) => s.engine === e),
      ),
    ),
    section(
      'Telephone band (8 kHz μ-law)',
      scored.filter((s) => s.telephone),
    ),
    '## The model',
    '',
    '```json',
    JSON.stringify(
      { recipe: meta.training.recipe, data: meta.training.data, train_row_accuracy: meta.training.train_row_accuracy },
      null,
      1,
    ),
    '```',
    '',
    `ONNX vs torch on ${32} training rows: max |difference| of class probabilities ${meta.maxDiff.toExponential(2)}.`,
    '',
  ].join('\n');
}
