import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HEAD_POLICY, OnnxOverlapHead } from '../gpu-worker/src/perception/overlap-head.ts';

/**
 * The overlap head's recipe in smoke mode (`npm run train:smoke`): a tiny seeded data set through
 * the worker's own perception, one epoch of training with Debian's python3-torch, the ONNX export,
 * and the held-out report. The exported ONNX must give torch's probabilities on the rows the
 * training run recorded, read back here through the runtime's own loader. Needs Debian's python3-torch,
 * festival with festvox-kdlpc16k, and flite (`.ci/run` installs them).
 */
const TORCH_PYTHON = '/usr/bin/python3';

describe('overlap head recipe, smoke mode', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'venus-train-smoke-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('generates, trains, exports an ONNX that matches torch, and reports', { timeout: 600_000 }, async () => {
    const model = path.join(dir, 'model');
    const node = (args: string[]) =>
      execFileSync(process.execPath, ['--import', 'tsx', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    node(['training/generate-data.ts', '--train', '2', '--festival', '1', '--heldout', '1', '--out', dir]);
    expect(readFileSync(path.join(dir, 'features.csv'), 'utf8').split('\n').length).toBeGreaterThan(3);
    // Both training engines and the held-out one are in the clip list (`.ci/run` installs Festival and
    // Flite): one Festival clip per class, spoken in a Festival voice unless it is background (the
    // television there is another training voice).
    const clips = readFileSync(path.join(dir, 'clips.csv'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => line.split(','))
      .map(([id, split, cls, engine]) => ({ id: id!, split, cls, engine }));
    const festival = clips.filter((c) => c.id.startsWith('train-festival-'));
    expect(festival.map((c) => c.cls).sort()).toEqual(['backchannel', 'background', 'interruption', 'other_directed']);
    expect(festival.filter((c) => c.cls !== 'background').every((c) => c.engine === 'festival')).toBe(true);
    expect(clips.some((c) => c.split === 'train' && c.engine === 'espeak')).toBe(true);
    execFileSync(
      TORCH_PYTHON,
      ['training/train_head.py', '--data', dir, '--out', model, '--epochs', '1', '--threads', '1'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const training = JSON.parse(readFileSync(path.join(model, 'training.json'), 'utf8')) as {
      check: { rows: number[][]; torch_probs: number[][] };
    };
    const head = await OnnxOverlapHead.load(path.join(model, 'overlap-head.onnx'));
    expect(head).not.toBeNull();
    try {
      const probs = await head!.score(training.check.rows.map((r) => Float32Array.from(r)));
      expect(probs.length).toBe(training.check.rows.length);
      expect(probs.length).toBeGreaterThan(0);
      const diffs = probs.flatMap((p, i) => Array.from(p, (v, k) => Math.abs(v - training.check.torch_probs[i]![k]!)));
      expect(Math.max(...diffs)).toBeLessThan(1e-4);
    } finally {
      await head!.close();
    }
    node(['training/evaluate.ts', '--data', dir, '--model', model]);
    expect(existsSync(path.join(model, 'REPORT.md'))).toBe(true);
    // The policy's out-of-fold check (`npm run train:folds`): four trainings with a voice group left
    // out, their predictions, and the grid replayed through the worker's own decision code.
    node(['training/folds.ts', '--data', dir, '--out', path.join(dir, 'FOLDS.md')]);
    const folds = readFileSync(path.join(dir, 'FOLDS.md'), 'utf8');
    const p = HEAD_POLICY;
    expect(folds).toContain(
      `| **HEAD_POLICY** | ${p.stopP} | ${p.stopRows} | ${p.minStopMs} | ${p.continueP} | ${p.minContinueMs} |`,
    );
    expect(folds).toContain('216 policies scored');
    for (let i = 0; i < 4; i++) expect(existsSync(path.join(dir, 'folds', `fold-${i}.csv`))).toBe(true);
  });
});
