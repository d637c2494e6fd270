import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
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

  it('runs over the telephone band: the microphone as 8 kHz mu-law, and the model still hears the request', {
    timeout: 120_000,
  }, async () => {
    const telephoneDir = path.join(outDir, 'telephone');
    const { score, report } = await runEvaluation({
      outDir: telephoneDir,
      sets: ['smooth_turn_taking'],
      perSet: 1,
      concurrency: 1,
      transcripts: false,
      telephone: true,
      floors: null,
      quiet: true,
    });
    expect(score.missing).toEqual([]);
    expect(report).toContain('sent as 8 kHz G.711 mu-law (telephone band)');
    const runDir = path.join(telephoneDir, 'runs', 'smooth_turn_taking');
    const events = readdirSync(runDir).flatMap((sample) =>
      readFileSync(path.join(runDir, sample, 'events.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { dir: string; event: Record<string, unknown> }),
    );
    const update = events.find((e) => e.dir === 'out' && e.event.type === 'session.update');
    expect((update?.event.session as Record<string, unknown> | undefined)?.input_audio_format).toBe('g711_ulaw');
    const heard = events
      .filter((e) => e.dir === 'in' && e.event.type === 'venus.user.transcript')
      .map((e) => String(e.event.transcript));
    expect(heard.some((text) => text.trim() !== '')).toBe(true);
  });
});
