import { describe, expect, it } from 'vitest';
import { runPerceptionCost } from './perception-cost.ts';
import { formatPerception } from './perception-section.ts';
import { runPerceptionSessions } from './perception-sessions.ts';
import { perceptionSpeech } from './support/perception-speech.ts';

// The perception bench on a tiny configuration: its figures must be well formed (finite, in their
// ranges, every component reported); their values are `npm run bench`'s business, never asserted.
describe('perception bench (smoke)', () => {
  const speech = perceptionSpeech();

  it("measures every component of a session's hearing on real speech, the user speaking over the assistant", async () => {
    const r = await runPerceptionCost({ sessions: 1, speech });
    expect(r.steps).toBeGreaterThan(10);
    expect(r.audioS).toBeCloseTo((r.steps * r.chunkMs) / 1000);
    expect(r.overlapSteps).toBeGreaterThan(0);
    for (const c of Object.values(r.cost)) {
      for (const v of [c.p50, c.p99, c.mean]) {
        expect(Number.isFinite(v)).toBe(true);
        expect(v).toBeGreaterThanOrEqual(0);
      }
      expect(c.p99).toBeGreaterThanOrEqual(c.p50);
    }
    expect(r.cost.total.mean).toBeGreaterThan(0);
    expect(r.cost.recogniser.mean).toBeGreaterThan(0);
    expect(r.cost.vad.mean).toBeGreaterThan(0);
    expect(['in the step', 'beside the step', 'absent']).toContain(r.present.embedding);
    expect(r.verdicts).toHaveLength(1);
  }, 120_000);

  it('runs sessions in real time through the port and counts steps, deadlines and transcripts', async () => {
    const s = await runPerceptionSessions({ counts: [2], seconds: 3, warmupSeconds: 3, inferenceThreads: 1, speech });
    expect(s.rows).toHaveLength(1);
    const [row] = s.rows;
    expect(row!.sessions).toBe(2);
    expect(row!.steps).toBeGreaterThan(0);
    expect(row!.missed).toBeGreaterThanOrEqual(0);
    expect(row!.transcripts).toBeLessThanOrEqual(row!.utterancesSpoken);
    expect(row!.cpuMsPerSessionS).toBeGreaterThan(0);
    expect([0, 2]).toContain(s.largestWithoutMisses);
    const cost = await runPerceptionCost({ sessions: 1, speech });
    const text = formatPerception(cost, s, { cost: 0, sessions: 0 });
    expect(text).toContain('Perception cost per session');
    expect(text).toContain('speech embedding');
    expect(text).toContain('largest session count with zero missed deadlines');
  }, 120_000);
});
