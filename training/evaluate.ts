/**
 * `npm run train:report`: scores the v1 rules and the trained head on the HELD-OUT clips of the
 * feature table (voices, phrases and an engine never used in training; audio only) and writes the
 * report beside the model: confusion matrices, rates against the targets, decision latency, by
 * engine and for telephone-band clips. Also checks that the ONNX file gives torch's outputs.
 *
 *   npm run train:report -- [--data out/training] [--model gpu-worker/models/overlap-head]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { OnnxOverlapHead } from '../gpu-worker/src/perception/overlap-head.ts';
import { decideBurst, readCsv } from './feature-table.ts';
import { formatReport, type Outcome, type Scored } from './report.ts';

const { values } = parseArgs({
  options: {
    data: { type: 'string', default: 'out/training' },
    model: { type: 'string', default: 'gpu-worker/models/overlap-head' },
  },
});

const clips = readCsv(join(values.data, 'clips.csv')).filter((c) => c.split === 'heldout');
const rows = readCsv(join(values.data, 'features.csv')).filter((r) => r.split === 'heldout');
const featureNames = Object.keys(rows[0] ?? {}).slice(4);
const head = await OnnxOverlapHead.load(join(values.model, 'overlap-head.onnx'));
if (!head) throw new Error(`no head at ${values.model}`);

// The ONNX export against torch on the rows training.json recorded.
const training = JSON.parse(readFileSync(join(values.model, 'training.json'), 'utf8'));
const check = await head.score(training.check.rows.map((r: number[]) => Float32Array.from(r)));
const maxDiff = Math.max(
  ...check.flatMap((p, i) => Array.from(p, (v, k) => Math.abs(v - training.check.torch_probs[i][k]))),
);

const byClip = new Map<string, Record<string, string>[]>();
for (const r of rows) byClip.set(r.clip!, [...(byClip.get(r.clip!) ?? []), r]);
const scored: Scored[] = [];
for (const c of clips) {
  const clipRows = byClip.get(c.clip!) ?? [];
  const scores = await head.score(clipRows.map((r) => Float32Array.from(featureNames, (n) => Number(r[n]))));
  const decided = decideBurst(
    clipRows.map((r, i) => ({ probs: scores[i]!, elapsedMs: Number(r.elapsed_ms), ended: Number(r.ended) > 0.5 })),
  );
  const headOutcome: Outcome = decided
    ? decided.verdict.action === 'continue'
      ? (decided.verdict.cause as Outcome)
      : 'stop'
    : c.heard === '1'
      ? 'undecided'
      : 'not heard';
  const headMs = decided ? Number(c.onset_ms) + decided.elapsedMs : null;
  const ruleOutcome: Outcome =
    c.rule_action === ''
      ? c.heard === '1'
        ? 'undecided'
        : 'not heard'
      : c.rule_action === 'continue'
        ? (c.rule_cause as Outcome)
        : 'stop';
  scored.push({
    cls: c.class as Scored['cls'],
    engine: c.engine!,
    telephone: c.telephone === '1',
    rules: { outcome: ruleOutcome, ms: c.rule_elapsed_ms ? Number(c.onset_ms) + Number(c.rule_elapsed_ms) : null },
    head: { outcome: headOutcome, ms: headMs },
  });
}
await head.close();
const report = formatReport(scored, { maxDiff, training, command: `npm run train:report -- --data ${values.data}` });
writeFileSync(join(values.model, 'REPORT.md'), report);
console.log(report);
