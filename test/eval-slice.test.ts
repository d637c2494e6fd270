import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadFloors } from '../eval/floors.ts';
import { runEvaluation } from '../eval/pipeline.ts';

/**
 * A slice of `npm run eval` through the real embedded runtime (reference model, built-in functions,
 * public WebSocket): a few synthetic samples per set, streamed in real time, scored, and held to
 * the committed floors in eval/floors.json, in the setting the floors were measured in (its `slice`:
 * the client-ASR stand-in at 200 ms chunks; the note there says why hearing is tested elsewhere). Timing bounds are left to `npm run eval`: tests make
 * no timing assertions.
 */
describe('evaluation slice', () => {
  const outDir = mkdtempSync(path.join(tmpdir(), 'venus-eval-slice-'));
  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it('scores every set and stays above the committed floors', { timeout: 150_000 }, async () => {
    const floors = loadFloors();
    const {
      score,
      floors: checks,
      report,
    } = await runEvaluation({
      outDir,
      perSet: floors.slice.perSet,
      perSetOverrides: { delegation: floors.slice.delegation },
      concurrency: floors.slice.concurrency,
      transcripts: floors.slice.transcripts,
      ...(floors.slice.chunkMs === undefined ? {} : { chunkMs: floors.slice.chunkMs }),
      floors,
      timingFloors: false,
      quiet: true,
    });
    expect(score.missing).toEqual([]);
    expect(score.samples.length).toBe(6 * floors.slice.perSet + floors.slice.delegation);
    const broken = (checks ?? []).filter((c) => !c.ok);
    expect(broken, JSON.stringify(broken)).toEqual([]);
    expect((checks ?? []).filter((c) => !c.skipped).length).toBeGreaterThan(5);
    expect(report).toContain('## Overlap handling (v1.5 sets)');
    for (const chart of ['behaviour.png', 'latency.png', 'delegation.png']) {
      expect([...readFileSync(path.join(outDir, chart)).subarray(1, 4)]).toEqual([0x50, 0x4e, 0x47]);
    }
  });
});
