import { type ModelSession, VenusError } from '@venus/protocol';
import { describe, expect, it } from 'vitest';
import { ModelSupervisor, REOPEN_ATTEMPTS } from './model-supervisor.ts';

/** Fake model session: only its identity and close matter here. */
const fakeModel = (incarnation: number) => ({ incarnation, close: async () => {} }) as unknown as ModelSession;
const lost = () => new VenusError('model_unavailable', 'inference thread exited', { retryable: true });
const tick = () => new Promise((r) => setTimeout(r, 0));

function setup(open: (incarnation: number) => Promise<ModelSession>) {
  const errors: string[] = [];
  const reopened: number[] = [];
  const sleeps: number[] = [];
  const sup = new ModelSupervisor({
    model: fakeModel(0),
    incarnation: 0,
    reopen: open,
    onError: (code) => errors.push(code),
    onReopened: (i) => reopened.push(i),
    isClosed: () => false,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  });
  return { sup, errors, reopened, sleeps };
}

describe('ModelSupervisor', () => {
  it('reopens a lost model under the next incarnation, backing off between attempts', async () => {
    let calls = 0;
    const t = setup(async (i) => {
      calls += 1;
      if (calls < 3) throw new Error('no thread yet');
      return fakeModel(i);
    });
    t.sup.guard(Promise.reject(lost()));
    for (let i = 0; i < 10 && (i === 0 || t.sup.isReopening); i++) await tick();
    expect(t.reopened).toEqual([1]);
    expect(t.sup.incarnation).toBe(1);
    expect(t.sleeps).toEqual([200, 400]);
    expect(t.errors).toEqual([]);
  });

  it(`gives up after ${REOPEN_ATTEMPTS} attempts and reports model_unavailable`, async () => {
    const t = setup(async () => {
      throw new Error('never');
    });
    t.sup.guard(Promise.reject(lost()));
    for (let i = 0; i < 40 && (i === 0 || t.sup.isReopening); i++) await tick();
    expect(t.errors).toEqual(['model_unavailable']);
    expect(t.sleeps).toHaveLength(REOPEN_ATTEMPTS - 1);
    expect(t.sup.incarnation).toBe(0);
  });

  it('reports a non-retryable failure, and ignores failures of a session already replaced', async () => {
    const t = setup(async (i) => fakeModel(i));
    const old = t.sup.model;
    t.sup.guard(Promise.reject(new VenusError('model_step_failed', 'bad input')));
    await tick();
    expect(t.errors).toEqual(['model_step_failed']);
    t.sup.guard(Promise.reject(lost()));
    for (let i = 0; i < 10 && (i === 0 || t.sup.isReopening); i++) await tick();
    t.sup.failed(new Error('late'), old, 'model step failed');
    expect(t.errors).toEqual(['model_step_failed']);
  });
});
