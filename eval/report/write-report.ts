import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { FloorCheck } from '../floors.ts';
import type { Metric } from '../scorer/aggregate.ts';
import type { RunScore } from '../scorer/score-run.ts';
import { renderBarChart } from './bar-chart.ts';
import type { Rgb } from './canvas.ts';
import { PAPER_V15, PEERS_V1 } from './published.ts';

export interface RunInfo {
  target: string;
  data: string;
  chunkMs: number | null;
  frameMs: number;
  /** The microphone went out as 8 kHz mu-law (telephone band); absent in runs before the option. */
  telephone?: boolean;
  asrDelayS: number;
  /** The client-ASR stand-in handed the model each utterance's text (else audio only). */
  transcripts: boolean;
  concurrency: number;
  samples: number;
  failures: { key: string; error: string }[];
  wallS: number;
  /** Event-loop delay of the process running the clients (and, embedded, the runtime). */
  loopDelayMs: { p99: number; max: number } | null;
  date: string;
}

const OURS: Rgb = [37, 99, 175];
const PAPER: Rgb = [222, 120, 40];

const pct = (v: number | null | undefined) => (v === null || v === undefined ? 'n/a' : `${Math.round(v * 100)}%`);
const sec = (v: number | null | undefined) => (v === null || v === undefined ? 'n/a' : `${v.toFixed(2)} s`);

function metricMap(metrics: readonly Metric[]): (key: string) => Metric | undefined {
  const m = new Map(metrics.map((x) => [x.key, x]));
  return (key) => m.get(key);
}

/**
 * Writes `report.md`, the PNG charts and `scores.json` (every sample's score and every metric) to
 * `outDir`, setting our figures beside the Realtime-Venus paper's and the published Full-Duplex-Bench
 * peers, with the caveats that make them not directly comparable.
 */
export function writeReport(outDir: string, score: RunScore, info: RunInfo, floors: FloorCheck[] | null): string {
  mkdirSync(outDir, { recursive: true });
  const get = metricMap(score.metrics);
  const v = (key: string) => get(key)?.value ?? null;
  const n = (key: string) => get(key)?.n ?? 0;

  writeFileSync(
    path.join(outDir, 'behaviour.png'),
    renderBarChart({
      title: 'Full-Duplex-Bench v1.5 style: what the assistant did',
      subtitle: 'ours: synthetic espeak voices, rule-based labels. paper: real recordings, LLM judge.',
      series: [
        { name: 'this runtime', color: OURS },
        { name: PAPER_V15.model, color: PAPER },
      ],
      groups: [
        {
          label: 'responds to interruptions',
          values: [v('user_interruption.respond_rate'), PAPER_V15.respondToInterruptions],
        },
        { label: 'continues: backchannel', values: [v('user_backchannel.resume_rate'), PAPER_V15.continueBackchannel] },
        {
          label: 'continues: other-directed',
          values: [v('talking_to_other.resume_rate'), PAPER_V15.continueOtherDirected],
        },
        { label: 'continues: background', values: [v('background_speech.resume_rate'), PAPER_V15.continueBackground] },
      ],
      max: 1,
      format: (x) => `${Math.round(x * 100)}%`,
    }),
  );
  const latencyGroups = [
    {
      label: 'this runtime',
      values: [v('user_interruption.response_latency_s'), v('smooth_turn_taking.response_latency_s')],
    },
    ...PEERS_V1.map((p) => ({ label: p.model, values: [p.interruptionLatencyS, p.turnTakingLatencyS] })),
  ];
  writeFileSync(
    path.join(outDir, 'latency.png'),
    renderBarChart({
      title: 'Response latency (s), lower is better',
      subtitle:
        'peers: Full-Duplex-Bench v1.0 published results on its own data; ours: synthetic data, same VAD rules.',
      series: [
        { name: 'after an interruption', color: OURS },
        { name: 'smooth turn-taking', color: PAPER },
      ],
      groups: latencyGroups,
      max: Math.max(2, ...latencyGroups.flatMap((g) => g.values.filter((x): x is number => x !== null))),
      format: (x) => x.toFixed(2),
    }),
  );
  writeFileSync(
    path.join(outDir, 'delegation.png'),
    renderBarChart({
      title: 'Asynchronous delegation over the public API',
      series: [{ name: 'this runtime', color: OURS }],
      groups: [
        { label: 'result landed mid-reply: delivered', values: [v('delegation.delivered_while_assistant_spoke_rate')] },
        { label: 'landed mid-user-turn: not over user', values: [v('delegation.delivered_after_user_turn_rate')] },
        { label: '"never mind" honoured', values: [v('delegation.cancel_honoured_rate')] },
        { label: 'second request: both delivered', values: [v('delegation.second_request_delivered_rate')] },
        { label: 'results admitted at a pause', values: [v('delegation.delivered_at_pause_rate')] },
        { label: 'results spoken over the user', values: [v('delegation.talked_over_user_rate')] },
      ],
      max: 1,
      format: (x) => `${Math.round(x * 100)}%`,
    }),
  );

  const lines: string[] = [];
  const row = (cells: (string | number)[]) => lines.push(`| ${cells.join(' | ')} |`);
  lines.push('# Full-Duplex-Bench-style evaluation', '');
  lines.push(
    `Run of ${info.date}: ${info.samples} samples (${info.failures.length} failed to run, ${score.missing.length} without output) ` +
      `against ${info.target}; data: ${info.data}. Foreground chunk ${info.chunkMs === null ? 'server default' : `${info.chunkMs} ms`}, ` +
      `microphone frames ${info.frameMs} ms${info.telephone ? ' sent as 8 kHz G.711 mu-law (telephone band)' : ''}, ` +
      (info.transcripts
        ? `**with a stand-in: the client sent each utterance's transcript ${info.asrDelayS} s after it ended** (the model did not have to hear the words), `
        : 'audio only (the model heard the words for itself), ') +
      `${info.concurrency} sessions at a time, ${Math.round(info.wallS)} s of wall time. ` +
      `Labels: ${score.judged ? 'LLM judge (rule-based labels kept in scores.json)' : 'rule-based (see eval/README.md)'}.`,
    '',
  );
  const misses = v('all.deadline_misses') ?? 0;
  lines.push(
    `Load check: ${misses} foreground steps missed their deadline` +
      (info.loopDelayMs
        ? `; client event-loop delay p99 ${info.loopDelayMs.p99.toFixed(0)} ms, max ${info.loopDelayMs.max.toFixed(0)} ms`
        : '') +
      '. High values mean the machine was too busy for real time and the timing figures are pessimistic.',
    '',
  );
  lines.push('## Caveats', '');
  lines.push(
    '- Different data: our samples are synthesised with eSpeak NG voices (en-us, en-gb and variants) and mixed by rule; the paper and the peers were measured on Full-Duplex-Bench recordings. Pass `--data DIR` to run on the real v1.5 folders.',
    "- Different judge: our respond/resume/other labels come from rules over the client's playout and the server's events (`--judge llm` adds an LLM judge); the paper used an LLM judge over ASR transcripts.",
    '- Different model: the embedded reference model is a narrow heuristic (VAD level and duration rules, pattern-matched text) standing in for the 9B Realtime-Venus models. It takes content from the transcript the client sends, so a client-side ASR stand-in is part of every measurement, and it cannot tell speech aimed at someone else from speech aimed at it except by level and duration.',
    "- Words are not recognised: the turn-over rule (≥ 1 s or > 3 words) estimates words from duration times the run's speaking rate.",
    '',
  );
  lines.push('![behaviour](behaviour.png)', '', '![latency](latency.png)', '', '![delegation](delegation.png)', '');

  lines.push('## Overlap handling (v1.5 sets)', '');
  row([
    'set',
    'n',
    'respond',
    'resume',
    'other',
    'cut short',
    'stop latency (mean / median)',
    'response latency (mean / median)',
    'paper',
  ]);
  row(['---', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:']);
  const paperFor: Record<string, string> = {
    user_interruption: `respond ${pct(PAPER_V15.respondToInterruptions)}`,
    user_backchannel: `continue ${pct(PAPER_V15.continueBackchannel)}`,
    talking_to_other: `continue ${pct(PAPER_V15.continueOtherDirected)}`,
    background_speech: `continue ${pct(PAPER_V15.continueBackground)}`,
  };
  for (const set of ['user_interruption', 'user_backchannel', 'talking_to_other', 'background_speech']) {
    if (!get(`${set}.respond_rate`)) continue;
    const stop = get(`${set}.stop_latency_s`);
    const resp = get(`${set}.response_latency_s`);
    row([
      set,
      n(`${set}.respond_rate`),
      pct(v(`${set}.respond_rate`)),
      pct(v(`${set}.resume_rate`)),
      pct(v(`${set}.other_rate`)),
      pct(v(`${set}.stop_rate`)),
      `${sec(stop?.value)} / ${sec(stop?.median)} (n=${stop?.n ?? 0})`,
      `${sec(resp?.value)} / ${sec(resp?.median)} (n=${resp?.n ?? 0})`,
      paperFor[set] ?? '',
    ]);
  }
  lines.push(
    '',
    `Commercial systems in the paper respond to interruptions: ${Object.entries(PAPER_V15.commercial)
      .map(([k, x]) => `${k} ${pct(x)}`)
      .join(', ')}.`,
    '',
  );

  lines.push('## Turn-taking (v1 sets) and latency beside published peers', '');
  row([
    'system',
    'latency after interruption',
    'smooth turn-taking latency',
    'pause TOR (lower better)',
    'smooth turn-taking TOR',
  ]);
  row(['---', '---:', '---:', '---:', '---:']);
  row([
    '**this runtime**',
    sec(v('user_interruption.response_latency_s')),
    sec(v('smooth_turn_taking.response_latency_s')),
    v('pause_handling.tor')?.toFixed(3) ?? 'n/a',
    v('smooth_turn_taking.tor')?.toFixed(3) ?? 'n/a',
  ]);
  for (const p of PEERS_V1) {
    row([
      p.model,
      sec(p.interruptionLatencyS),
      sec(p.turnTakingLatencyS),
      p.pauseTor.toFixed(3),
      p.turnTakingTor.toFixed(3),
    ]);
  }
  lines.push(
    '',
    'Peers: Full-Duplex-Bench v1.0 published results (its README); their pause TOR is on the synthetic set, turn-taking TOR on Candor.',
    '',
  );

  lines.push('## Delegation', '');
  row(['metric', 'value', 'n']);
  row(['---', '---:', '---:']);
  for (const m of score.metrics.filter((x) => x.key.startsWith('delegation.'))) {
    const value =
      m.unit === 'rate'
        ? pct(m.value)
        : m.unit === 'seconds'
          ? `${sec(m.value)} (median ${sec(m.median)})`
          : String(m.value ?? 'n/a');
    row([m.label, value, m.n]);
  }
  lines.push('');

  if (floors) {
    lines.push('## Committed floors (eval/floors.json)', '');
    row(['metric', 'value', 'bound', 'status']);
    row(['---', '---:', '---:', '---']);
    for (const f of floors) {
      const bound = [f.min === undefined ? '' : `≥ ${f.min}`, f.max === undefined ? '' : `≤ ${f.max}`]
        .filter(Boolean)
        .join(', ');
      row([
        f.key,
        f.value === null ? 'n/a' : Number(f.value.toFixed(3)),
        bound,
        f.skipped ? 'skipped' : f.ok ? 'ok' : '**BELOW FLOOR**',
      ]);
    }
    lines.push('');
  }

  lines.push('## Samples', '');
  row(['sample', 'expected', 'label (rule)', 'stop', 'response', 'took turn', 'delegation']);
  row(['---', '---', '---', '---:', '---:', '---', '---']);
  for (const s of score.samples) {
    const d = s.delegation.kind ? `${s.delegation.kind}: ${s.delegation.success ? 'ok' : 'failed'}` : '';
    row([
      s.key,
      s.expected,
      s.label ? `${s.judgeLabel ? `${s.judgeLabel} (judge), ` : ''}${s.label} (${s.rule})` : '',
      s.stopLatencyS === null ? '' : s.stopLatencyS.toFixed(2),
      s.responseLatencyS === null ? '' : s.responseLatencyS.toFixed(2),
      s.tookTurn === null ? '' : String(s.tookTurn),
      d,
    ]);
  }
  for (const f of info.failures) lines.push(`- run failed: ${f.key}: ${f.error}`);
  lines.push('');
  const report = lines.join('\n');
  writeFileSync(path.join(outDir, 'report.md'), report);
  writeFileSync(
    path.join(outDir, 'scores.json'),
    `${JSON.stringify({ info, metrics: score.metrics, floors, samples: score.samples.map(({ judgeInput: _j, ...s }) => s) }, null, 1)}\n`,
  );
  return report;
}
