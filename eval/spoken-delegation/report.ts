import type { SpokenDelegationRun } from './evaluate.ts';
import { confusion, type GroupScore, type ScoredTrial, scoreGroup, VERDICTS } from './score.ts';

/** The figure the target is about: right function with the right arguments. */
export const TARGET_RATE = 0.9;

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const code = (x: unknown) => `\`${typeof x === 'string' ? x : JSON.stringify(x)}\``;

function row(label: string, s: GroupScore): string {
  const counts = VERDICTS.map((v) => s.counts[v]).join(' | ');
  return `| ${label} | ${s.n} | **${pct(s.rightRate)}** | ${counts} | ${s.failedMisheard} / ${s.failedHeardRight} | ${s.answered} | ${pct(s.wordAccuracy)} |`;
}

function table(groups: readonly [string, readonly ScoredTrial[]][]): string[] {
  return [
    '| group | n | right call | right | wrong args | wrong function | no function | no delegation | failed: misheard / heard right | right and answered | words right |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...groups.filter(([, t]) => t.length > 0).map(([label, t]) => row(label, scoreGroup(t))),
  ];
}

function confusionTable(trials: readonly ScoredTrial[]): string[] {
  const m = confusion(trials);
  return [
    `| expected \\ got | ${m.columns.join(' | ')} |`,
    `| --- | ${m.columns.map(() => '---').join(' | ')} |`,
    ...m.rows.map((r, i) => `| ${r} | ${m.cells[i]!.join(' | ')} |`),
  ];
}

function failureLine(t: ScoredTrial): string {
  const got = t.plan ? `${t.plan.functionName} ${code(t.plan.args)}` : 'none';
  const query = t.query === null ? 'no delegation' : `delegated ${code(t.query)}`;
  return `- ${t.id} (${t.verdict}): said ${code(t.text)}, heard ${code(t.transcript)}${t.inGrammar ? '' : ' (out of grammar)'}, ${query}, planned ${got}; expected ${t.expected.functionName} ${code(t.expected.args)}`;
}

/**
 * REPORT.md for a run: the headline, per voice and engine, clean and telephone-band separately,
 * the confusion matrix, the causes found (`findings`: markdown written by whoever read the failures) and
 * every failure.
 */
export function renderReport(run: SpokenDelegationRun, findings = ''): string {
  const { trials } = run;
  const demo = trials.filter((t) => t.topic !== 'calculation');
  const all = scoreGroup(trials);
  const spoken = scoreGroup(demo);
  const by = <K extends string>(key: (t: ScoredTrial) => K, list: readonly ScoredTrial[] = trials) => {
    const keys = [...new Set(list.map(key))];
    return keys.map((k) => [k, list.filter((t) => key(t) === k)] as [string, ScoredTrial[]]);
  };
  const mixLine = `${run.mix.weather} weather, ${run.mix.time} time and ${run.mix.calculation} calculation requests per voice`;
  const lines = [
    '# Spoken requests delegated to the right function (held-out voices)',
    '',
    'Issue 11 asks that a spoken request in the demo domain be delegated to the right function with the',
    'right arguments at least 90% of the time, on voices and an engine not used in training and on',
    'telephone-band audio. This is that measurement: speech in, audio only, through the real reference',
    'model and the real harness routing.',
    '',
    '## Headline',
    '',
    `- **Weather and time requests (what the demo grammar lets a user say): ${pct(spoken.rightRate)} right` +
      ` (${spoken.counts.right}/${spoken.n})** - target ${pct(TARGET_RATE)}: ` +
      `${spoken.rightRate >= TARGET_RATE ? 'met' : 'NOT met'}.`,
    `- All demo-domain requests, spoken calculations included: ${pct(all.rightRate)} (${all.counts.right}/${all.n}).`,
    `- Recogniser words right: ${pct(spoken.wordAccuracy)} on weather and time requests (WER ${pct(spoken.wordErrorRate)}),` +
      ` ${pct(all.wordAccuracy)} on all.`,
    '',
    '## How it is measured',
    '',
    `- Seed \`${run.seed}\`; ${mixLine}; each request said once clean and once through the 8 kHz` +
      " μ-law round trip (`telephone` in `training/mix.ts`, the edge's own G.711), so every figure below" +
      ` has a clean and a telephone-band half. ${trials.length} trials in ${Math.round(run.seconds)} s.`,
    `- Voices: ${run.speakers.join(', ')}. The eSpeak NG voices are the evaluation's user voices`,
    '  (`eval/scenarios/phrases.ts`); Flite is the engine never used in training (`training/phrases.ts`).' +
      (run.skipped.length > 0 ? ` **Skipped (not installed): ${run.skipped.join(', ')}.**` : ''),
    "- Requests: the demo grammar's phrasings (`demo-vocabulary.ts`) for weather and time in its 42 cities,",
    '  city, phrasing and level (-32 to -20 dBFS active level) drawn per request from the seed; and',
    '  calculations said in words ("what is twelve plus seven"), which are part of the reference model\'s',
    '  domain (`intents.ts`). Expected calls: `weather {city, when}`, `world_clock {city, ask}`,',
    "  `calculator {kind, expression}`, with the defaults the functions' schemas fill in.",
    '- Each request is the first thing said in a fresh session of `ReferenceModelPort.create()` (what',
    '  `npm start` runs: Silero VAD, PocketSphinx with the demo grammar, the rules, eSpeak NG): 320 ms of',
    '  silence, the speech in 160 ms chunks, then silence until the reply has delegated or finished. Steps',
    '  are driven as fast as the model answers (no real-time wait). The `<delegate>` span is read with the',
    "  session host's `DelegateParser`; its query goes through `DelegationRunner` over the built-in",
    '  functions with the default planner (`RouterPlanner`), as the embedded runtime routes it.',
    '- Scored: **right** (function and arguments as expected), **wrong args** (right function), **wrong',
    '  function**, **no function** (delegated, the planner found none), **no delegation** (no span). Arguments',
    '  are compared after removing case, accents and all whitespace from strings ("new york" = "New York",',
    '  "12+7" = "12 + 7"); numbers exactly; no missing or extra keys. Words right: the reference words',
    '  minus substitutions and deletions (word alignment, apostrophes dropped, case ignored); WER counts',
    '  insertions too. "Failed: misheard / heard right" splits the failures by whether the transcript had',
    '  any word wrong. "Right and answered": right calls whose function also answered (the weather',
    '  function fails for a city its bundled sample lacks, however well the request was routed).',
    '',
    '## By engine and band',
    '',
    ...table([
      ['all', trials],
      ['weather + time', demo],
      ...by((t) => `${t.engine}, ${t.band}`),
      ...by((t) => `${t.engine}, ${t.band}`, demo).map(
        ([k, t]) => [`${k} (weather + time)`, t] as [string, ScoredTrial[]],
      ),
    ]),
    '',
    '## By topic and band',
    '',
    ...table(by((t) => `${t.topic}, ${t.band}`)),
    '',
    '## By voice and band',
    '',
    ...table(by((t) => `${t.speaker}, ${t.band}`)),
    '',
    '## Confusion (expected function x what the harness chose)',
    '',
    'All trials:',
    '',
    ...confusionTable(trials),
    '',
    'Telephone band only:',
    '',
    ...confusionTable(trials.filter((t) => t.band === 'telephone')),
    '',
  ];
  if (findings.trim() !== '') lines.push('## Why requests fail', '', findings.trim(), '');
  const failures = trials.filter((t) => t.verdict !== 'right');
  lines.push(
    '## Every failure',
    '',
    ...(failures.length === 0 ? ['None.'] : failures.map(failureLine)),
    '',
    '## Regenerate',
    '',
    '```sh',
    `npm run eval:delegation-spoken -- --seed ${run.seed}`,
    '```',
    '',
    'About 1.5 minutes on a 2-core machine.',
    "Needs Debian's `flite` for the Flite voices (`apt-get install flite`; without it they are skipped and",
    'this report says so). Writes this file and `out/spoken-delegation/results.json` (every trial).',
    'The "Why requests fail" section is `eval/spoken-delegation/findings.md`, written by reading the failures',
    'of a run; the figures it quotes are from the seed above. `-- --render-only` rewrites this file from',
    'the last results.json without running again.',
    '',
  );
  return lines.join('\n');
}
