import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { VenusError } from '@venus/protocol';
import * as ort from 'onnxruntime-node';
import { MicroBatcher } from './micro-batcher.ts';
import { FEATURE_COUNT } from './overlap-features.ts';
import type { Interruption } from './overlap-policy.ts';

/** The head's classes, in the order of its output. */
export const HEAD_CLASSES = ['interruption', 'backchannel', 'other_directed', 'background'] as const;
export type HeadClass = (typeof HEAD_CLASSES)[number];

export const OVERLAP_HEAD_PATH = fileURLToPath(new URL('../../models/overlap-head/overlap-head.onnx', import.meta.url));

/**
 * The port a trained overlap head sits behind: class probabilities (HEAD_CLASSES order) for rows
 * of FEATURE_NAMES. A better head replaces the ONNX file, or implements this.
 */
export interface OverlapHead {
  score(rows: readonly Float32Array[]): Promise<Float32Array[]>;
  close(): Promise<void>;
}

/**
 * When the head's probabilities are a decision, at a decision point `elapsedMs` into the burst:
 * the floor is taken once P(interruption) has been at least STOP_P on STOP_ROWS decision points in
 * a row (after MIN_STOP_MS of speech), the assistant carries on once another class reaches
 * CONTINUE_P (after MIN_CONTINUE_MS), and a burst still undecided at DECIDE_BY_MS, or ending, gets
 * the most probable class.
 *
 * The values were chosen on the TRAINING clips only (out-of-fold predictions, the training voices
 * split into groups; `npm run train:folds` replays this and a grid of alternatives), never on the
 * held-out set: with the speech embedding in the rows the
 * head is sure of an interruption on a single row, so one row at P ≥ 0.9 takes the floor. STOP_ROWS
 * was 3 for the earlier head without the embedding, whose first rows depended on how a burst's
 * onset fell on the 32 ms VAD frames (a clean "uh-huh" on a phone line scored P(interruption) 0.98
 * at one alignment and 0.00 at another); this head carries on through that "uh-huh", "mm-hm" and
 * "yeah" at all 8 alignments of a 160 ms cycle, on a μ-law line, and stops for "Wait, wait, stop
 * there" at 256 ms at all 8.
 */
export interface HeadPolicy {
  stopP: number;
  stopRows: number;
  minStopMs: number;
  continueP: number;
  minContinueMs: number;
  decideByMs: number;
}

export const HEAD_POLICY: HeadPolicy = {
  stopP: 0.9,
  stopRows: 1,
  minStopMs: 160,
  continueP: 0.7,
  minContinueMs: 400,
  decideByMs: 2000,
};

/** Consecutive decision points with P(interruption) ≥ STOP_P, ending at the one scored `probs`. */
export function nextStopStreak(streak: number, probs: ArrayLike<number>, policy: HeadPolicy = HEAD_POLICY): number {
  return (probs[0] ?? 0) >= policy.stopP ? streak + 1 : 0;
}

/**
 * The decision at one decision point; `stopStreak` is `nextStopStreak` carried over the burst's
 * decision points up to and including this one.
 */
export function headDecision(
  probs: ArrayLike<number>,
  elapsedMs: number,
  ended: boolean,
  stopStreak: number,
  policy: HeadPolicy = HEAD_POLICY,
): Interruption | null {
  let best = 0;
  for (let i = 1; i < HEAD_CLASSES.length; i++) if ((probs[i] ?? 0) > (probs[best] ?? 0)) best = i;
  const verdict = (cls: number): Interruption =>
    cls === 0
      ? { action: 'discard', cause: 'interruption', cancelsWork: false }
      : { action: 'continue', cause: HEAD_CLASSES[cls]!, cancelsWork: false };
  if (ended || elapsedMs >= policy.decideByMs) return verdict(best);
  if (stopStreak >= policy.stopRows && elapsedMs >= policy.minStopMs) return verdict(0);
  if (best !== 0 && (probs[best] ?? 0) >= policy.continueP && elapsedMs >= policy.minContinueMs) return verdict(best);
  return null;
}

/**
 * The trained head through onnxruntime-node (one intra-op thread): `features` [N, FEATURE_COUNT]
 * in, `probs` [N, classes] out. Rows of all a thread's sessions in one step run as one batch.
 *
 * @example
 *   const head = await OnnxOverlapHead.load(); // null when no head is installed: the rules decide
 *   const [probs] = await head!.score([row.features]);
 */
export class OnnxOverlapHead implements OverlapHead {
  private readonly batcher = new MicroBatcher<readonly Float32Array[], Float32Array[]>((batch) => this.flush(batch));

  private constructor(private readonly session: ort.InferenceSession) {}

  /**
   * The head at `path`, or null when there is none (or VENUS_OVERLAP_HEAD=off). A head made for
   * other features (its input is not FEATURE_COUNT wide, e.g. a file older than the code) is
   * refused here with a warning, rather than failing every run and leaving the rules to judge
   * unnoticed; the rules judge.
   */
  static async load(path = OVERLAP_HEAD_PATH): Promise<OnnxOverlapHead | null> {
    if (process.env.VENUS_OVERLAP_HEAD === 'off' || !existsSync(path)) return null;
    const session = await ort.InferenceSession.create(path, { intraOpNumThreads: 1, executionMode: 'sequential' });
    const input = session.inputMetadata.find((m) => m.name === 'features');
    const width = input?.isTensor ? input.shape[1] : undefined;
    if (width !== FEATURE_COUNT) {
      await session.release();
      console.warn(
        `overlap head ${path} takes ${String(width)} features, this code makes ${FEATURE_COUNT}: not used, the rules judge (retrain it: npm run train:all)`,
      );
      return null;
    }
    return new OnnxOverlapHead(session);
  }

  score(rows: readonly Float32Array[]): Promise<Float32Array[]> {
    if (rows.length === 0) return Promise.resolve([]);
    for (const row of rows) {
      if (row.length !== FEATURE_COUNT)
        throw new VenusError('invalid_settings', `overlap head rows have ${FEATURE_COUNT} features, got ${row.length}`);
    }
    return this.batcher.submit(rows);
  }

  async close(): Promise<void> {
    await this.session.release();
  }

  private async flush(batch: Array<readonly Float32Array[]>): Promise<Array<PromiseSettledResult<Float32Array[]>>> {
    const all = batch.flat();
    const input = new Float32Array(all.length * FEATURE_COUNT);
    for (let i = 0; i < all.length; i++) input.set(all[i]!, i * FEATURE_COUNT);
    try {
      const out = await this.session.run({ features: new ort.Tensor('float32', input, [all.length, FEATURE_COUNT]) });
      const probs = out.probs!.data as Float32Array;
      const classes = HEAD_CLASSES.length;
      let at = 0;
      return batch.map((rows) => {
        const value = rows.map((_, i) => probs.slice((at + i) * classes, (at + i + 1) * classes));
        at += rows.length;
        return { status: 'fulfilled', value };
      });
    } catch (reason) {
      return batch.map(() => ({ status: 'rejected', reason }));
    }
  }
}
