import { describe, expect, it } from 'vitest';
import { FRAME_S, mergeSegments, speechSegments } from './speech-segments.ts';

const frames = (pattern: string) =>
  Float32Array.from([...pattern].map((c) => (c === '#' ? 0.9 : c === '~' ? 0.4 : 0.05)));

describe('speechSegments', () => {
  it('opens at 0.5, rides through 0.35–0.5, and closes after ~100 ms below 0.35', () => {
    const segs = speechSegments(frames('..####~~##...####..'), 0);
    expect(segs).toHaveLength(2);
    expect(segs[0]!.start).toBeCloseTo(2 * FRAME_S, 3);
    expect(segs[0]!.end).toBeCloseTo(10 * FRAME_S, 3);
  });

  it('merges pauses up to the gap and keeps longer ones apart', () => {
    const pattern = `${'#'.repeat(10)}${'.'.repeat(15)}${'#'.repeat(10)}`;
    expect(speechSegments(frames(pattern), 0.6)).toHaveLength(1);
    expect(speechSegments(frames(pattern), 0.3)).toHaveLength(2);
  });

  it('drops blips shorter than 90 ms', () => {
    expect(speechSegments(frames('....##.......'), 0.5)).toEqual([]);
  });
});

describe('mergeSegments', () => {
  it('sorts and merges overlapping and near stretches', () => {
    expect(
      mergeSegments(
        [
          { start: 2.5, end: 3 },
          { start: 0, end: 1 },
          { start: 1.4, end: 1.8 },
        ],
        0.5,
      ),
    ).toEqual([
      { start: 0, end: 1.8 },
      { start: 2.5, end: 3 },
    ]);
  });
});
