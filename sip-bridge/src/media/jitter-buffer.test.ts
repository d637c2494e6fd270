import { describe, expect, it } from 'vitest';
import { JitterBuffer, seqDistance } from './jitter-buffer.ts';

const frame = (n: number) => new Uint8Array(160).fill(n);

function setup(depth = 3) {
  const out: number[] = [];
  const jb = new JitterBuffer({ silence: 0xff, depth, onFrame: (f) => out.push(f[0]!) });
  return { jb, out };
}

describe('jitter buffer', () => {
  it('puts reordered packets back in order and drops late and duplicate ones', () => {
    const { jb, out } = setup();
    for (const seq of [10, 12, 12, 11, 13, 9]) jb.push(seq, frame(seq));
    expect(out).toEqual([10, 11, 12, 13]);
    expect(jb.stats).toMatchObject({ duplicate: 1, late: 1 });
  });

  it('conceals a lost packet with the last frame once depth later ones arrived, then silence', () => {
    const { jb, out } = setup();
    for (const seq of [1, 4, 5, 6]) jb.push(seq, frame(seq));
    // 2 and 3 lost: 2 repeats frame 1, 3 is silence (0xff).
    expect(out).toEqual([1, 1, 0xff, 4, 5, 6]);
    expect(jb.stats.concealed).toBe(2);
  });

  it('does not fill a gap longer than the concealment limit', () => {
    const { jb, out } = setup();
    for (const seq of [1, 20, 21, 22]) jb.push(seq, frame(seq));
    expect(out).toEqual([1, 20, 21, 22]);
    expect(jb.stats.discontinuities).toBe(1);
  });

  it('follows the sequence number across its 16-bit wrap and holds at most depth frames', () => {
    const { jb, out } = setup();
    for (const seq of [65534, 65535, 0, 1]) jb.push(seq, frame(seq & 0xff));
    expect(out).toEqual([0xfe, 0xff, 0, 1]);
    expect(seqDistance(65535, 0)).toBe(1);
    const held = setup(2);
    for (const seq of [1, 3, 4, 5, 6, 7, 8]) held.jb.push(seq, frame(seq));
    expect(held.out).toEqual([1, 1, 3, 4, 5, 6, 7, 8]);
  });
});
