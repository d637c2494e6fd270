import { describe, expect, it } from 'vitest';
import { cancelLastTurnPlan, classifyInterruption, cutPlan, notePlan } from './interruption.ts';

const v = (action: 'continue' | 'discard' | 'repair' | 'park', cancelsWork = false) => ({
  action,
  cause: action === 'continue' ? ('backchannel' as const) : ('interruption' as const),
  cancelsWork,
});
const outcome = { heardMs: 900, heardText: 'It is sunny', remainder: 'in Paris today.' };

describe('interruption mechanics', () => {
  it('classifies: continue is noted, a floor-taking verdict cuts what is being said, else cancels the last turn', () => {
    expect(classifyInterruption(v('continue'), true)).toBe('note');
    expect(classifyInterruption(v('discard'), true)).toBe('cut');
    expect(classifyInterruption(v('repair', true), false)).toBe('cancel_last_turn');
    expect(classifyInterruption(v('discard'), false)).toBe('note');
  });

  it('continue records the overlap with what was heard so far and changes nothing else', () => {
    const plan = notePlan(v('continue'), 'u1', 400);
    expect(plan.cancel).toEqual([]);
    expect(plan.park).toBeNull();
    expect(plan.drafts).toEqual([
      {
        stream: 'assistant',
        type: 'assistant.interruption',
        data: {
          action: 'continue',
          cause: 'backchannel',
          utteranceId: 'u1',
          heardMs: 400,
          heardText: '',
          cancelledWork: [],
        },
      },
    ]);
  });

  it('discard keeps the heard text and cancels the turn work only when the verdict says so', () => {
    const keep = cutPlan(v('discard'), 'u1', { action: 'discard', ...outcome }, ['w1'], null);
    expect(keep.cancel).toEqual([]);
    const drop = cutPlan(v('discard', true), 'u1', { action: 'discard', ...outcome }, ['w1'], null);
    expect(drop.cancel).toEqual([{ workId: 'w1', reason: 'interrupted:discard' }]);
    expect(drop.drafts[0]?.data).toMatchObject({ heardMs: 900, heardText: 'It is sunny', cancelledWork: ['w1'] });
  });

  it('repair records the cut and the work it cancels, with no plan', () => {
    const plan = cutPlan(v('repair', true), 'u1', { action: 'repair', ...outcome }, ['w1', 'w2'], null);
    expect(plan.park).toBeNull();
    expect(plan.cancel.map((c) => c.reason)).toEqual(['interrupted:repair', 'interrupted:repair']);
    expect(plan.drafts.map((d) => d.type)).toEqual(['assistant.interruption']);
  });

  it('park keeps the unspoken remainder as a plan, on the timeline and for the model', () => {
    const plan = cutPlan(v('park'), 'u1', { action: 'park', ...outcome }, ['w1'], 'plan_1');
    expect(plan.park).toEqual({ planId: 'plan_1', utteranceId: 'u1', remainder: 'in Paris today.' });
    expect(plan.drafts.map((d) => d.type)).toEqual(['assistant.interruption', 'assistant.parked']);
    expect(plan.drafts[0]?.data).toMatchObject({ planId: 'plan_1' });
  });

  it('a cancel after the reply ended cancels the last turn as user_cancelled', () => {
    const plan = cancelLastTurnPlan(v('discard', true), 'u3', ['w7']);
    expect(plan.cancel).toEqual([{ workId: 'w7', reason: 'user_cancelled' }]);
    expect(plan.drafts[0]?.data).toMatchObject({ utteranceId: 'u3', heardMs: 0, cancelledWork: ['w7'] });
  });
});
