/**
 * `npm run train:e2e`: the v1 rules and the trained head through the running system: the embedded
 * runtime over its WebSocket API, in real time, audio only (`--no-transcripts`), on the eval's
 * overlap sets, whose voices and lines are all HELD-OUT (never in the head's training data), at
 * 1000 ms (the server default) and 160 ms chunks. Writes `REPORT-e2e.md` beside the model.
 *
 *   npm run train:e2e -- [--per-set 10] [--model gpu-worker/models/overlap-head] [--chunks 1000,160] [--policies rules,head] [--telephone-chunks 1000]
 *
 * `--telephone-chunks`: also at these chunk sizes with the microphone sent as 8 kHz G.711 mu-law
 * (the eval's `--telephone`), so the model hears telephone-band audio ("" for none).
 *
 * Besides the overlap sets, the turn-taking sets: `pause_handling` (a request said in two parts:
 * taking the turn in the pause is wrong) and `smooth_turn_taking` (one request: taking it is right).
 *
 * One dialogue at a time (the eval's `--concurrency 1`): the figures are about the policy, and on a
 * 2-core machine several real-time dialogues at once starve the recogniser and skew every row.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    'per-set': { type: 'string', default: '10' },
    model: { type: 'string', default: 'gpu-worker/models/overlap-head' },
    out: { type: 'string', default: 'out/overlap-e2e' },
    chunks: { type: 'string', default: '1000,160' },
    policies: { type: 'string', default: 'rules,head' },
    'telephone-chunks': { type: 'string', default: '1000' },
  },
});
const SETS = ['user_interruption', 'user_backchannel', 'talking_to_other', 'background_speech'] as const;
const TURN_SETS = ['pause_handling', 'smooth_turn_taking'] as const;
const WANT = {
  user_interruption: 'respond',
  user_backchannel: 'resume',
  talking_to_other: 'resume',
  background_speech: 'resume',
};

interface Score {
  set: (typeof SETS)[number] | (typeof TURN_SETS)[number];
  label: string | null;
  tookTurn: boolean | null;
  responseLatencyS: number | null;
  stopped: boolean | null;
  stopLatencyS: number | null;
}

function quantile(xs: number[], q: number): string {
  if (xs.length === 0) return 'n/a';
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!.toFixed(2);
}

const sections: string[] = [];
const numbers = (list: string) =>
  list
    .split(',')
    .filter((v) => v.trim() !== '')
    .map(Number);
const configs = [
  ...numbers(values.chunks).map((chunkMs) => ({ chunkMs, telephone: false })),
  ...numbers(values['telephone-chunks']).map((chunkMs) => ({ chunkMs, telephone: true })),
];
for (const { chunkMs, telephone } of configs) {
  for (const policy of values.policies.split(',') as ('rules' | 'head')[]) {
    if (policy !== 'rules' && policy !== 'head') throw new Error(`--policies takes rules and/or head, got "${policy}"`);
    const out = join(values.out, `${policy}-${chunkMs}${telephone ? '-telephone' : ''}`);
    const args = [
      '--import',
      'tsx',
      'eval/run.ts',
      '--no-transcripts',
      '--no-floors',
      '--sets',
      [...SETS, ...TURN_SETS].join(','),
    ];
    args.push('--per-set', values['per-set'], '--chunk-ms', String(chunkMs), '--concurrency', '1', '--out', out);
    if (telephone) args.push('--telephone');
    const title = `${policy}, ${chunkMs} ms chunks${telephone ? ', telephone band (microphone sent as 8 kHz G.711 mu-law)' : ''}`;
    console.log(`${title} -> ${out}`);
    execFileSync('node', args, {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, VENUS_OVERLAP_HEAD: policy === 'head' ? 'on' : 'off' },
    });
    const { samples, info } = JSON.parse(readFileSync(join(out, 'scores.json'), 'utf8')) as {
      samples: Score[];
      info: { wallS: number };
    };
    const lines = [
      `### ${title}`,
      '',
      '| set (expected) | n | respond | resume | other | cut short | right |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ];
    for (const set of SETS) {
      const of = samples.filter((s) => s.set === set);
      const count = (l: string) => of.filter((s) => s.label === l).length;
      const right = of.filter((s) => s.label === WANT[set]).length;
      lines.push(
        `| ${set} (${WANT[set]}) | ${of.length} | ${count('respond')} | ${count('resume')} | ${count('other')} | ${of.filter((s) => s.stopped).length} | ${of.length ? Math.round((100 * right) / of.length) : 0}% |`,
      );
    }
    const latency = samples
      .filter((s) => s.set === 'user_interruption' && s.stopped && s.stopLatencyS !== null)
      .map((s) => s.stopLatencyS!);
    lines.push(
      '',
      `Stop latency on interruptions: p50 ${quantile(latency, 0.5)} s, p90 ${quantile(latency, 0.9)} s (n ${latency.length}); ${Math.round(info.wallS)} s of wall time.`,
      '',
      '| turn-taking set (right) | n | took the turn | held | right |',
      '| --- | ---: | ---: | ---: | ---: |',
    );
    for (const set of TURN_SETS) {
      const of = samples.filter((s) => s.set === set && s.tookTurn !== null);
      const took = of.filter((s) => s.tookTurn).length;
      const right = set === 'pause_handling' ? of.length - took : took;
      const want = set === 'pause_handling' ? 'hold through the pause' : 'take the turn';
      lines.push(
        `| ${set} (${want}) | ${of.length} | ${took} | ${of.length - took} | ${of.length ? Math.round((100 * right) / of.length) : 0}% |`,
      );
    }
    const turns = samples
      .filter((s) => s.set === 'smooth_turn_taking' && s.responseLatencyS !== null)
      .map((s) => s.responseLatencyS!);
    lines.push(
      '',
      `Wrong turn-takes during user pauses: the pause_handling row's "took the turn" (target ≤ 5%). Response latency after a complete request: p50 ${quantile(turns, 0.5)} s (n ${turns.length}).`,
      '',
    );
    sections.push(lines.join('\n'));
  }
}
const report = [
  '# Overlap head through the running system',
  '',
  `Regenerate: \`npm run train:e2e -- --per-set ${values['per-set']} --policies ${values.policies} --chunks ${values.chunks} --telephone-chunks ${values['telephone-chunks']}\`. The embedded runtime (reference model) streamed over its WebSocket API in real time by \`npm run eval\`, audio only (\`--no-transcripts\`: the model hears for itself), on the eval's v1.5 overlap sets; every voice and line there is HELD-OUT from the head's training. \`rules\` = \`VENUS_OVERLAP_HEAD=off\` (the v1 level/duration/stop-word rules), \`head\` = the trained head. Labels are the eval's rule-based ones (eval/README.md); "cut short" counts any stop, even one followed by a resume.`,
  '',
  ...sections,
].join('\n');
writeFileSync(join(values.model, 'REPORT-e2e.md'), report);
console.log(report);
