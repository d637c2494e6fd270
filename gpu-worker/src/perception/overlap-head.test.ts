import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { firstHeadVerdict } from './head-verdict.ts';
import { FEATURE_COUNT, type FeatureRow } from './overlap-features.ts';
import { HEAD_POLICY, headDecision, nextStopStreak, OnnxOverlapHead, OVERLAP_HEAD_PATH } from './overlap-head.ts';
import { EmbeddingStream, MELSPECTROGRAM_PATH } from './speech-embedding.ts';
import type { Burst } from './voice-activity.ts';

const probs = (...p: number[]) => Float32Array.from(p);

describe('headDecision', () => {
  const rows = HEAD_POLICY.stopRows;
  it('takes the floor once an interruption is likely enough on STOP_ROWS points in a row, not before MIN_STOP_MS', () => {
    const sure = probs(0.9, 0.05, 0.03, 0.02);
    expect(headDecision(sure, HEAD_POLICY.minStopMs - 1, false, rows)).toBeNull();
    expect(headDecision(sure, HEAD_POLICY.minStopMs, false, rows - 1)).toBeNull();
    expect(headDecision(sure, HEAD_POLICY.minStopMs, false, rows)).toEqual({
      action: 'discard',
      cause: 'interruption',
      cancelsWork: false,
    });
  });
  it('counts a run of stop-confident points, and a doubtful point breaks it', () => {
    const hi = (1 + HEAD_POLICY.stopP) / 2;
    const lo = HEAD_POLICY.stopP / 2;
    const run: number[] = [];
    for (const p of [hi, HEAD_POLICY.stopP + 0.01, lo, hi, hi, hi])
      run.push(nextStopStreak(run.at(-1) ?? 0, probs(p, 1 - p, 0, 0)));
    expect(run).toEqual([1, 2, 0, 1, 2, 3]);
  });
  it('carries on for a confident other class, waits when unsure, decides at the end or by DECIDE_BY_MS', () => {
    expect(headDecision(probs(0.02, 0.02, 0.94, 0.02), HEAD_POLICY.minContinueMs, false, 0)?.cause).toBe(
      'other_directed',
    );
    expect(headDecision(probs(0.4, 0.3, 0.2, 0.1), 800, false, 0)).toBeNull();
    expect(headDecision(probs(0.2, 0.5, 0.2, 0.1), 800, true, 0)?.cause).toBe('backchannel');
    expect(headDecision(probs(0.5, 0.1, 0.1, 0.3), HEAD_POLICY.decideByMs, false, 0)?.action).toBe('discard');
  });
});

describe('firstHeadVerdict', () => {
  it('returns the first decision in order and skips judged bursts', () => {
    const judged: Burst = { speechMs: 300, levelDb: -30, overlapped: true, judged: true };
    const open: Burst = { ...judged, judged: false };
    const row = (burst: Burst, elapsedMs: number): FeatureRow => ({
      burst,
      elapsedMs,
      ended: false,
      features: new Float32Array(FEATURE_COUNT),
      embedding: { stream: new EmbeddingStream(), hops: [] },
    });
    const rows = [row(judged, 480), row(open, 480), row(open, 560)];
    const scores = [probs(0.99, 0, 0, 0), probs(0.3, 0.3, 0.3, 0.1), probs(0.01, 0.97, 0.01, 0.01)];
    expect(firstHeadVerdict(rows, scores)).toEqual({
      burst: open,
      verdict: { action: 'continue', cause: 'backchannel', cancelsWork: false },
    });
  });

  it('stops only after STOP_ROWS confident points of the same burst, counted across steps', () => {
    const burst: Burst = { speechMs: 300, levelDb: -30, overlapped: true, judged: false };
    const row = (elapsedMs: number): FeatureRow => ({
      burst,
      elapsedMs,
      ended: false,
      features: new Float32Array(FEATURE_COUNT),
      embedding: { stream: new EmbeddingStream(), hops: [] },
    });
    const sure = probs(0.97, 0.01, 0.01, 0.01);
    const doubtful = probs(HEAD_POLICY.stopP / 2, 0.5, 0.1, 0.1);
    const at = (i: number) => HEAD_POLICY.minStopMs + i * 80;
    // A doubtful point breaks the run; then STOP_ROWS - 1 sure points (one step) are not enough.
    expect(firstHeadVerdict([row(at(0))], [doubtful])).toBeNull();
    const early = Array.from({ length: HEAD_POLICY.stopRows - 1 }, (_, i) => row(at(1 + i)));
    expect(
      firstHeadVerdict(
        early,
        early.map(() => sure),
      ),
    ).toBeNull();
    // The next step's sure point completes the run.
    expect(firstHeadVerdict([row(at(HEAD_POLICY.stopRows))], [sure])?.verdict.action).toBe('discard');
  });
});

describe('OnnxOverlapHead', () => {
  it('is absent when there is no model file (the rules then decide)', async () => {
    expect(await OnnxOverlapHead.load('/nonexistent/overlap-head.onnx')).toBeNull();
  });

  it('refuses a model that does not take FEATURE_COUNT features (the rules then decide)', async () => {
    // A real ONNX file of another shape: the speech embedding's mel model (input [batch, samples]).
    expect(await OnnxOverlapHead.load(MELSPECTROGRAM_PATH)).toBeNull();
  });

  it.runIf(existsSync(OVERLAP_HEAD_PATH))('scores rows into class probabilities, batched', async () => {
    const head = (await OnnxOverlapHead.load())!;
    const rows = [new Float32Array(FEATURE_COUNT), Float32Array.from({ length: FEATURE_COUNT }, (_, i) => i / 10)];
    const [a, b] = await Promise.all([head.score(rows), head.score([rows[0]!])]);
    expect(a).toHaveLength(2);
    for (const p of [...a, ...b]) expect(p.reduce((x, y) => x + y, 0)).toBeCloseTo(1, 5);
    expect(Array.from(b[0]!)).toEqual(Array.from(a[0]!));
    expect(() => head.score([new Float32Array(3)])).toThrow(/features/);
    await head.close();
  });
});
