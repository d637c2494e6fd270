import { describe, expect, it } from 'vitest';
import { ForegroundLoop } from './foreground-loop.ts';

const tick = () => new Promise((r) => setTimeout(r, 0));

function setup(paused = () => false) {
  let clock = 0;
  const steps: number[] = [];
  const missed: { chunk: number; lateMs: number }[] = [];
  const stepped: number[] = [];
  let finish: (stepped: boolean) => void = () => {};
  const loop = new ForegroundLoop({
    chunkMs: 160,
    now: () => clock,
    autoStep: false,
    paused,
    step: (chunk) => {
      steps.push(chunk);
      return new Promise<boolean>((r) => {
        finish = r;
      });
    },
    onMissed: (chunk, lateMs) => missed.push({ chunk, lateMs }),
    onStepped: (ms) => stepped.push(ms),
  });
  return { loop, steps, missed, stepped, advance: (ms: number) => (clock += ms), finish: (s = true) => finish(s) };
}

describe('ForegroundLoop', () => {
  it('starts one step per boundary and numbers chunks from 0', async () => {
    const t = setup();
    t.loop.boundary();
    expect(t.loop.currentChunk).toBe(1);
    t.advance(30);
    t.finish();
    await tick();
    t.loop.boundary();
    expect(t.steps).toEqual([0, 1]);
    expect(t.stepped).toEqual([30]);
  });

  it('records a missed deadline, never a queued step, when the step is still running', async () => {
    const t = setup();
    t.loop.boundary();
    t.advance(160);
    t.loop.boundary();
    t.advance(200);
    t.loop.boundary();
    expect(t.steps).toEqual([0]);
    expect(t.missed).toEqual([
      { chunk: 1, lateMs: 0 },
      { chunk: 2, lateMs: 200 },
    ]);
    t.finish();
    await tick();
    t.loop.boundary();
    expect(t.steps).toEqual([0, 3]);
  });

  it('passes boundaries without a step while paused, and counts no step that did not happen', async () => {
    let paused = true;
    const t = setup(() => paused);
    t.loop.boundary();
    expect(t.steps).toEqual([]);
    paused = false;
    t.loop.boundary();
    t.finish(false);
    await tick();
    expect(t.steps).toEqual([1]);
    expect(t.stepped).toEqual([]);
  });

  it('does nothing once stopped', () => {
    const t = setup();
    t.loop.stop();
    t.loop.boundary();
    expect(t.steps).toEqual([]);
  });
});
