import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { evaluateSpokenDelegation, type SpokenDelegationRun } from './evaluate.ts';
import { renderReport } from './report.ts';
import { DEFAULT_MIX, type SpokenRequest, speakerName } from './requests.ts';
import { scoreGroup } from './score.ts';

/**
 * `npm run eval:delegation-spoken`: spoken demo-domain requests in held-out voices (clean and
 * telephone-band) through the reference model and the harness's routing; writes REPORT.md here
 * and every trial to out/spoken-delegation/results.json.
 *
 *   --seed S          request set (default 11)
 *   --per-voice N     requests per voice, split half weather, a third time, a sixth calculations (default 12)
 *   --report FILE     where the report goes (default eval/spoken-delegation/REPORT.md)
 *   --out DIR         where results.json goes (default out/spoken-delegation)
 *   --render-only     no run: rewrite the report from DIR/results.json (after editing findings.md)
 *   --voices RE       only the voices whose name matches this regular expression, e.g. 'f3|en-gb'
 *                     (quick experiments; give --report and --out elsewhere so REPORT.md stays whole)
 */
const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: '11' },
    'per-voice': { type: 'string' },
    report: { type: 'string', default: join(here, 'REPORT.md') },
    out: { type: 'string', default: 'out/spoken-delegation' },
    'render-only': { type: 'boolean', default: false },
    voices: { type: 'string' },
  },
});

const perVoice = values['per-voice'] === undefined ? undefined : Number(values['per-voice']);
if (perVoice !== undefined && !(Number.isInteger(perVoice) && perVoice >= 1)) {
  console.error('--per-voice must be a whole number of at least 1');
  process.exit(2);
}
const mix =
  perVoice === undefined
    ? DEFAULT_MIX
    : {
        weather: Math.ceil(perVoice / 2),
        time: Math.round(perVoice / 3),
        calculation: Math.max(0, perVoice - Math.ceil(perVoice / 2) - Math.round(perVoice / 3)),
      };

function voiceFilter(pattern: string): (request: SpokenRequest) => boolean {
  const re = new RegExp(pattern);
  return (request) => re.test(speakerName(request.speaker));
}

const run: SpokenDelegationRun = values['render-only']
  ? (JSON.parse(readFileSync(join(values.out, 'results.json'), 'utf8')) as SpokenDelegationRun)
  : await evaluateSpokenDelegation({
      seed: values.seed,
      mix,
      ...(values.voices === undefined ? {} : { only: voiceFilter(values.voices) }),
      onTrial: (t, done, total) => {
        const mark = t.verdict === 'right' ? 'ok ' : 'XX ';
        console.log(
          `${String(done).padStart(4)}/${total} ${mark}${t.id.padEnd(26)} ${t.verdict.padEnd(14)} heard "${t.transcript}"` +
            (t.verdict === 'right' ? '' : ` -> ${t.query ?? '(no delegation)'} -> ${JSON.stringify(t.plan)}`),
        );
      },
    });

if (!values['render-only']) {
  mkdirSync(values.out, { recursive: true });
  writeFileSync(join(values.out, 'results.json'), `${JSON.stringify(run, null, 2)}\n`);
}
const findingsFile = join(here, 'findings.md');
const findings = existsSync(findingsFile) ? readFileSync(findingsFile, 'utf8') : '';
writeFileSync(values.report, renderReport(run, findings));
const spoken = scoreGroup(run.trials.filter((t) => t.topic !== 'calculation'));
const all = scoreGroup(run.trials);
console.log(
  `weather + time: ${spoken.counts.right}/${spoken.n} right (${(100 * spoken.rightRate).toFixed(1)}%); ` +
    `all: ${all.counts.right}/${all.n} (${(100 * all.rightRate).toFixed(1)}%); ` +
    `words right ${(100 * all.wordAccuracy).toFixed(1)}%; ${Math.round(run.seconds)} s. Report: ${values.report}`,
);
