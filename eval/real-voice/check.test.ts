import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ALSA_DIR } from './recordings.ts';
import { runRealVoiceCheck } from './run-check.ts';
import { scoreWords } from './words.ts';

describe('word scoring', () => {
  it('counts the reference words heard right and every substitution, deletion and insertion', () => {
    expect(scoreWords('front center', 'front center')).toMatchObject({ right: 2, total: 2, substitutions: 0 });
    expect(scoreWords('go forward ten meters', 'go on forward ten')).toEqual({
      right: 3,
      total: 4,
      substitutions: 0,
      deletions: 1,
      insertions: 1,
    });
    expect(scoreWords('ten of clubs', '')).toMatchObject({ right: 0, deletions: 3 });
  });
});

// CI installs alsa-utils (.ci/run); elsewhere the check says which package to install and this is skipped.
describe.skipIf(!existsSync(ALSA_DIR))('real-voice check (smoke: one recording, one level)', () => {
  it('runs the recogniser, the VAD and the overlap path on a real recording and writes a well-formed report', async () => {
    const { report, markdown } = await runRealVoiceCheck({
      alsaDir: ALSA_DIR,
      pocketsphinxSrc: undefined,
      limit: 1,
      realTime: false,
      assistantDbs: [-30],
      loadAvg: 0,
      command: 'npm run eval:real-voice',
    });
    expect(report.recordings).toHaveLength(1);
    const [rec] = report.recordings;
    expect(rec!.source.name).toBe('alsa-utils');
    expect(report.recognition).toHaveLength(1);
    expect(report.recognition[0]!.withWords.total).toBeGreaterThan(0);
    expect(report.vad).toHaveLength(1);
    expect(report.vad[0]!.maxProbability).toBeGreaterThanOrEqual(0);
    expect(report.overlap.length).toBeLessThanOrEqual(1);
    for (const o of report.overlap) {
      expect(o.assistantDb).toBe(-30);
      if (o.verdict) expect(['stop', 'continue']).toContain(o.verdict.action);
    }
    expect(report.missing.map((s) => s.name)).toContain('pocketsphinx (Debian source package, test/data)');
    for (const heading of [
      '## Recordings and licences',
      '## Recogniser',
      '## Voice activity',
      '## Spoken over the assistant',
      '## What this can and cannot tell',
    ])
      expect(markdown).toContain(heading);
    expect(markdown).toMatch(/GPL-2/);
  }, 120_000);
});
