import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadFloors } from './floors.ts';
import { runEvaluation } from './pipeline.ts';
import { EVAL_SETS, type EvalSet, EvalSetSchema } from './scenarios/scenario.ts';
import { judgeFromEnv } from './scorer/llm-judge.ts';

const HELP = `npm run eval -- [options]

Full-Duplex-Bench-v1.5-style evaluation over the public realtime API (see eval/README.md).

  --per-set N        samples per set (default 20; with --data: all unless given)
  --sets a,b         only these sets (${EVAL_SETS.join(', ')})
  --seed S           seed of the synthetic data (default "venus-eval")
  --data DIR         run Full-Duplex-Bench v1.5 folders (input.wav + metadata.json) instead
  --set NAME         the set of every sample under --data (otherwise from folder names)
  --url URL          an OpenAI-Realtime-compatible endpoint (default: the embedded runtime, in process)
  --api-key KEY      bearer token for --url (or EVAL_API_KEY)
  --venus MODE       auto | on | off: use the venus.* extensions (default auto)
  --session JSON     session.update fields sent after session.created
  --chunk-ms N       foreground chunk asked of a Venus runtime (default: the server's, 1000 ms)
  --frame-ms N       microphone frame, 20-100 ms (default 40)
  --concurrency N    sessions at a time (default 8)
  --telephone        send the microphone as 8 kHz G.711 mu-law (g711_ulaw), as a phone line carries it
  --transcripts      also hand the model each utterance's transcript (a client-ASR stand-in, for
                     models that cannot hear words; labelled as such in the report)
  --asr-delay S      with --transcripts: seconds after an utterance ends that its text is sent (default 0.5)
  --no-transcripts   audio only: the model hears for itself (the default)
  --judge llm        also label with an LLM judge (EVAL_JUDGE_URL, EVAL_JUDGE_MODEL, EVAL_JUDGE_API_KEY)
  --out DIR          output folder (default out/eval)
  --no-floors        do not check eval/floors.json
  --rescore          score the runs already in --out again (no streaming), e.g. after a scorer change
`;

const { values } = parseArgs({
  options: {
    'per-set': { type: 'string' },
    sets: { type: 'string' },
    seed: { type: 'string' },
    data: { type: 'string' },
    set: { type: 'string' },
    url: { type: 'string' },
    'api-key': { type: 'string' },
    venus: { type: 'string' },
    session: { type: 'string' },
    'chunk-ms': { type: 'string' },
    'frame-ms': { type: 'string' },
    concurrency: { type: 'string' },
    telephone: { type: 'boolean' },
    'asr-delay': { type: 'string' },
    'no-transcripts': { type: 'boolean' },
    transcripts: { type: 'boolean' },
    judge: { type: 'string' },
    out: { type: 'string' },
    'no-floors': { type: 'boolean' },
    rescore: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
});

if (values.help) {
  console.log(HELP);
  process.exit(0);
}

const positive = (name: string, v: string | undefined): number | undefined => {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} needs a positive number, got "${v}"`);
  return n;
};
const sets = values.sets?.split(',').map((s) => EvalSetSchema.parse(s.trim())) as EvalSet[] | undefined;
const venus = values.venus ?? 'auto';
if (venus !== 'auto' && venus !== 'on' && venus !== 'off') throw new Error('--venus is auto, on or off');
let judge: ReturnType<typeof judgeFromEnv> = null;
if (values.judge !== undefined) {
  if (values.judge !== 'llm') throw new Error('--judge takes "llm"');
  judge = judgeFromEnv(process.env);
  if (!judge) throw new Error('--judge llm needs EVAL_JUDGE_URL and EVAL_JUDGE_MODEL');
}
const apiKey = values['api-key'] ?? process.env.EVAL_API_KEY;
// Floors describe the embedded runtime on our synthetic data; another endpoint or data set is reported, not judged.
// They also hold only in the setting they were measured in (floors.json's `slice`: transcripts, chunk).
const floors = loadFloors();
const transcripts = values.transcripts === true && values['no-transcripts'] !== true;
const chunkArg = values['chunk-ms'] === undefined ? undefined : Number(values['chunk-ms']);
const sameSetting = transcripts === floors.slice.transcripts && chunkArg === floors.slice.chunkMs;
const useFloors = !values['no-floors'] && !values.url && !values.data && sameSetting;
if (!values['no-floors'] && !values.url && !values.data && !sameSetting)
  console.log(
    `[eval] floors not checked: eval/floors.json holds for ${floors.slice.transcripts ? '--transcripts' : 'audio only'}` +
      `${floors.slice.chunkMs === undefined ? '' : ` --chunk-ms ${floors.slice.chunkMs}`}, not this setting`,
  );
const outDir = path.resolve(values.out ?? 'out/eval');

const result = await runEvaluation({
  outDir,
  ...(values['per-set'] !== undefined
    ? { perSet: positive('per-set', values['per-set'])! }
    : values.data
      ? {}
      : { perSet: 20 }),
  ...(sets ? { sets } : {}),
  ...(values.seed ? { seed: values.seed } : {}),
  ...(values.data ? { data: values.data } : {}),
  ...(values.set ? { dataSet: EvalSetSchema.parse(values.set) } : {}),
  ...(values.url ? { url: values.url } : {}),
  ...(apiKey ? { apiKey } : {}),
  venus,
  ...(values.session ? { session: JSON.parse(values.session) as Record<string, unknown> } : {}),
  ...(values['chunk-ms'] ? { chunkMs: positive('chunk-ms', values['chunk-ms'])! } : {}),
  ...(values['frame-ms'] ? { frameMs: positive('frame-ms', values['frame-ms'])! } : {}),
  ...(values.telephone ? { telephone: true } : {}),
  ...(values.concurrency ? { concurrency: positive('concurrency', values.concurrency)! } : {}),
  ...(values['asr-delay'] ? { asrDelayS: positive('asr-delay', values['asr-delay'])! } : {}),
  transcripts,
  ...(judge ? { judge } : {}),
  floors: useFloors ? floors : null,
  rescore: values.rescore === true,
});

for (const m of result.score.metrics) {
  const value =
    m.value === null
      ? 'n/a'
      : m.unit === 'rate'
        ? `${(m.value * 100).toFixed(0)}%`
        : m.unit === 'seconds'
          ? `${m.value.toFixed(2)} s`
          : String(m.value);
  console.log(`  ${m.key.padEnd(52)} ${value.padStart(8)}  (n=${m.n})`);
}
const broken = result.floors?.filter((f) => !f.ok) ?? [];
for (const f of broken)
  console.log(`[eval] BELOW FLOOR: ${f.key} = ${f.value} (min ${f.min ?? '-'}, max ${f.max ?? '-'})`);
console.log(`[eval] report: ${path.join(outDir, 'report.md')}`);
if (broken.length > 0 || result.score.samples.length === 0) process.exitCode = 1;
