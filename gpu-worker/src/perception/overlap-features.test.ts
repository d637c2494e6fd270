import { describe, expect, it } from 'vitest';
import {
  DECISION_MS,
  FEATURE_COUNT,
  FEATURE_NAMES,
  OverlapFeatureTracker,
  pitchHz,
  wordCues,
} from './overlap-features.ts';
import type { Burst } from './voice-activity.ts';

const NO_WORDS = { text: '', score: Number.NaN };

function tone(hz: number, amplitude: number): Float32Array {
  return Float32Array.from({ length: 512 }, (_, i) => amplitude * Math.sin((2 * Math.PI * hz * i) / 16_000));
}

function burst(overlapped: boolean): Burst {
  return { speechMs: 64, levelDb: -30, overlapped, judged: false };
}

describe('OverlapFeatureTracker', () => {
  it('gives a row every 80 ms of an overlapping burst, and one when it ends', () => {
    const tracker = new OverlapFeatureTracker();
    const b = burst(true);
    const rows = [];
    for (let i = 0; i < 20; i++) {
      const row = tracker.frame(tone(180, 0.05), 0.9, b, i === 19, NO_WORDS, -26);
      if (row) rows.push(row);
    }
    // 20 frames of 32 ms (plus the onset frame before the first) reach 672 ms: 8 decision points, then the end.
    expect(rows.map((r) => Math.floor(r.elapsedMs / DECISION_MS))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 8]);
    expect(rows.at(-1)!.ended).toBe(true);
    const last = rows.at(-1)!.features;
    expect(last).toHaveLength(FEATURE_COUNT);
    expect(last[FEATURE_NAMES.indexOf('speech_frac')]).toBe(1);
    expect(last[FEATURE_NAMES.indexOf('has_foreground')]).toBe(1);
    expect(last[FEATURE_NAMES.indexOf('voiced_frac')]).toBe(1);
  });

  it('gives no rows for a burst that does not overlap the assistant, or is judged', () => {
    const tracker = new OverlapFeatureTracker();
    const quiet = burst(false);
    const judged = { ...burst(true), judged: true };
    let rows = 0;
    for (let i = 0; i < 10; i++) if (tracker.frame(tone(180, 0.05), 0.9, quiet, false, NO_WORDS, null)) rows++;
    for (let i = 0; i < 10; i++) if (tracker.frame(tone(180, 0.05), 0.9, judged, false, NO_WORDS, null)) rows++;
    expect(rows).toBe(0);
  });

  it('starts its statistics again for each burst', () => {
    const tracker = new OverlapFeatureTracker();
    for (let i = 0; i < 10; i++) tracker.frame(tone(180, 0.2), 0.9, burst(true), false, NO_WORDS, null);
    const b = burst(true);
    tracker.frame(tone(180, 0.01), 0.9, b, false, NO_WORDS, null);
    const row = tracker.frame(tone(180, 0.01), 0.9, b, false, NO_WORDS, null)!;
    expect(row.elapsedMs).toBe(96);
    const level = row.features[FEATURE_NAMES.indexOf('level_db')]! * 10 - 30;
    expect(level).toBeCloseTo(10 * Math.log10(0.01 ** 2 / 2), 0);
  });
});

describe('pitchHz', () => {
  it('finds the pitch of a voiced frame and none in noise-free silence', () => {
    expect(pitchHz(tone(200, 0.1))).toBeGreaterThan(190);
    expect(pitchHz(tone(200, 0.1))).toBeLessThan(210);
    expect(pitchHz(new Float32Array(512))).toBe(0);
  });
});

describe('wordCues', () => {
  const cue = (text: string, name: (typeof FEATURE_NAMES)[number]) =>
    wordCues({ text, score: -50 })[FEATURE_NAMES.indexOf(name) - FEATURE_NAMES.indexOf('has_words')];
  it('reads stop words, addressees, backchannels and requests from a partial', () => {
    expect(cue('wait what time is it', 'early_stop_word')).toBe(1);
    expect(cue('honey', 'addressee_word')).toBe(1);
    expect(cue('hey sam', 'addressee_word')).toBe(1);
    expect(cue('yeah okay', 'backchannel_only')).toBe(1);
    expect(cue('yeah what is the weather', 'backchannel_only')).toBe(0);
    expect(cue('actually make it paris', 'correction_word')).toBe(1);
    expect(cue('weather in paris', 'request_word')).toBe(1);
  });
  it('is all zeros without words', () => {
    expect(wordCues(NO_WORDS)).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
  });
});
