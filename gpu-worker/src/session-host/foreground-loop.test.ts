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

  describe('perception ticks between boundaries', () => {
    function ticking(chunkMs = 1000) {
      let clock = 0;
      const log: string[] = [];
      const missed: number[] = [];
      let finishStep: (stepped: boolean) => void = () => {};
      let finishTick: () => void = () => {};
      let wanted = true;
      const loop = new ForegroundLoop({
        chunkMs,
        now: () => clock,
        autoStep: false,
        step: (chunk) => {
          log.push(`step ${chunk}`);
          return new Promise<boolean>((r) => {
            finishStep = r;
          });
        },
        tick: {
          periodMs: 80,
          run: (chunk) => {
            if (!wanted) return null;
            log.push(`tick ${chunk}`);
            return new Promise<void>((r) => {
              finishTick = r;
            });
          },
        },
        onMissed: (chunk) => missed.push(chunk),
      });
      return {
        loop,
        log,
        missed,
        advance: (ms: number) => (clock += ms),
        finishStep: () => finishStep(true),
        finishTick: () => finishTick(),
        want: (w: boolean) => (wanted = w),
      };
    }

    it('offers each tick the chunk in progress, one at a time, and never during a step', async () => {
      const t = ticking();
      t.loop.boundary();
      t.loop.perceive();
      expect(t.log).toEqual(['step 0']);
      t.finishStep();
      await tick();
      t.loop.perceive();
      t.loop.perceive();
      expect(t.log).toEqual(['step 0', 'tick 1']);
      t.finishTick();
      await tick();
      t.loop.perceive();
      expect(t.log).toEqual(['step 0', 'tick 1', 'tick 1']);
    });

    it('starts a boundary that found a tick running as soon as the tick ends: no missed deadline', async () => {
      const t = ticking();
      t.loop.perceive();
      t.advance(1000);
      t.loop.boundary();
      expect(t.log).toEqual(['tick 0']);
      t.finishTick();
      await tick();
      expect(t.log).toEqual(['tick 0', 'step 0']);
      expect(t.missed).toEqual([]);
      // The deferred step is still one step: the next boundary while it runs is missed, as ever.
      t.loop.boundary();
      expect(t.missed).toEqual([1]);
    });

    it('does nothing when the session has nothing to hear, or the chunk is no longer than a tick', async () => {
      const t = ticking();
      t.want(false);
      t.loop.perceive();
      t.loop.boundary();
      expect(t.log).toEqual(['step 0']);
      const short = ticking(80);
      short.loop.perceive();
      expect(short.log).toEqual([]);
    });
  });
});
