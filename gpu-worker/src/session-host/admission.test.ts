import type { BackendResult, DeliveryPolicy, ResultUrgency } from '@venus/protocol';
import { describe, expect, it } from 'vitest';
import { type BoundaryState, type PendingResult, planBoundary, requiredSilenceMs, STARVATION_MS } from './admission.ts';

let seq = 0;
function pending(
  policy: DeliveryPolicy,
  over: Partial<BackendResult> = {},
  landed = { chunk: 0, atMs: 0 },
): PendingResult {
  seq += 1;
  return {
    result: {
      workId: `w${seq}`,
      session: 's',
      incarnation: 0,
      ok: true,
      text: 'done',
      policy,
      completedAtMs: 0,
      expiresAtMs: 1_000_000,
      ...over,
    },
    resultSeq: seq,
    landedChunk: landed.chunk,
    landedAtMs: landed.atMs,
    busyAtFirstBoundary: null,
  };
}

const idle: BoundaryState = {
  chunk: 1,
  nowMs: 5000,
  wallNowMs: 0,
  incarnation: 0,
  userSpeaking: false,
  assistantBusy: false,
  lastActivityAtMs: 0,
};
const ids = (ps: { pending: PendingResult }[]) => ps.map((p) => p.pending.result.workId);

describe('admission at a boundary', () => {
  it('never admits a result at the boundary of the chunk it landed in', () => {
    const p = pending('interrupt', {}, { chunk: 1, atMs: 0 });
    const plan = planBoundary([p], idle);
    expect(plan.admit).toEqual([]);
    expect(plan.keep).toEqual([p]);
  });

  it('interrupt: admitted at the next boundary, cutting in when the assistant is busy', () => {
    const p = pending('interrupt');
    const busy = planBoundary([p], { ...idle, assistantBusy: true, userSpeaking: true });
    expect(busy.admit).toEqual([{ pending: p, mode: 'speak', cutIn: true }]);
    const quiet = planBoundary([pending('interrupt')], idle);
    expect(quiet.admit[0]?.cutIn).toBe(false);
  });

  it('when_idle: waits while either side speaks and until the required silence passed', () => {
    const p = pending('when_idle', {}, { chunk: 0, atMs: 4900 });
    expect(planBoundary([p], { ...idle, assistantBusy: true }).admit).toEqual([]);
    expect(planBoundary([p], { ...idle, userSpeaking: true }).admit).toEqual([]);
    // 100 ms waited: 795 ms of silence required.
    expect(planBoundary([p], { ...idle, lastActivityAtMs: 5000 - 794 }).admit).toEqual([]);
    expect(planBoundary([p], { ...idle, lastActivityAtMs: 5000 - 795 }).admit).toHaveLength(1);
  });

  it('when_idle: the required silence is max(250, 800 - 0.05 x the oldest wait)', () => {
    expect(requiredSilenceMs(0)).toBe(800);
    expect(requiredSilenceMs(4000)).toBe(600);
    expect(requiredSilenceMs(11_000)).toBe(250);
    expect(requiredSilenceMs(60_000)).toBe(250);
    // A young result rides on the oldest one's wait: 10 s waited -> 300 ms is enough for both.
    const old = pending('when_idle', {}, { chunk: 0, atMs: -5000 });
    const young = pending('when_idle', {}, { chunk: 0, atMs: 4990 });
    const plan = planBoundary([young, old], { ...idle, lastActivityAtMs: 5000 - 300 });
    expect(plan.admit).toHaveLength(1);
  });

  it('silent: admitted at once into the context even while both sides speak', () => {
    const p = pending('silent');
    const plan = planBoundary([p], { ...idle, assistantBusy: true, userSpeaking: true });
    expect(plan.admit).toEqual([{ pending: p, mode: 'silent', cutIn: false }]);
  });

  it('skip_if_busy: expired when the user was mid-turn at its first boundary, else as when_idle', () => {
    const busy = pending('skip_if_busy');
    const plan = planBoundary([busy], { ...idle, userSpeaking: true });
    expect(plan.expire).toEqual([{ pending: busy, reason: 'skipped_busy' }]);
    const free = pending('skip_if_busy');
    expect(planBoundary([free], { ...idle, assistantBusy: true }).keep).toEqual([free]);
    expect(planBoundary([free], idle).admit).toHaveLength(1);
  });

  it('expires a result past its TTL and one of a stale incarnation', () => {
    const late = pending('when_idle', { expiresAtMs: 10 });
    const stale = pending('when_idle', { incarnation: 3 });
    const plan = planBoundary([late, stale], { ...idle, wallNowMs: 11 });
    expect(plan.expire.map((e) => e.reason)).toEqual(['ttl', 'stale_incarnation']);
  });

  it('speaks one result per boundary: silent ones all enter, spoken ones wait their turn', () => {
    const a = pending('when_idle');
    const b = pending('when_idle');
    const c = pending('silent');
    const plan = planBoundary([a, b, c], idle);
    expect(ids(plan.admit)).toEqual([c.result.workId, a.result.workId]);
    expect(plan.keep).toEqual([b]);
  });

  it('orders due results: cut-ins, starving, corrections and need-input, ordinary, progress last', () => {
    const u = (urgency: ResultUrgency | undefined, atMs = 4000) =>
      pending('when_idle', urgency ? { urgency } : {}, { chunk: 0, atMs });
    const progress = u('progress');
    const ordinary = u(undefined);
    const correction = u('correction');
    const needInput = u('need_input');
    const starving = u('progress', 5000 - STARVATION_MS - 1);
    const order: string[] = [];
    let left = [progress, ordinary, needInput, correction, starving];
    while (left.length > 0) {
      const plan = planBoundary(left, idle);
      order.push(...ids(plan.admit));
      left = plan.keep;
    }
    const name = new Map([progress, ordinary, correction, needInput, starving].map((p, i) => [p.result.workId, i]));
    const labels = ['progress', 'ordinary', 'correction', 'need_input', 'starving'];
    // Corrections and need-input rank alike; between equals the earlier result goes first.
    expect(order.map((id) => labels[name.get(id) ?? -1])).toEqual([
      'starving',
      'correction',
      'need_input',
      'ordinary',
      'progress',
    ]);
  });

  it('among equals, the least slack goes first (sooner expiry, longer speech)', () => {
    const relaxed = pending('when_idle', { expiresAtMs: 900_000 });
    const tight = pending('when_idle', { expiresAtMs: 100_000 });
    expect(ids(planBoundary([relaxed, tight], idle).admit)).toEqual([tight.result.workId]);
    const short = pending('when_idle', { text: 'ok' });
    const long = pending('when_idle', { text: 'x'.repeat(400) });
    expect(ids(planBoundary([short, long], idle).admit)).toEqual([long.result.workId]);
  });
});
