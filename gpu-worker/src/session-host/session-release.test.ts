import { describe, expect, it } from 'vitest';
import { setup, tick } from './session-runtime-fakes.ts';

const audio = (ms: number) => new Int16Array((24_000 * ms) / 1000).fill(1000);

describe('SessionRuntime.release (drain handover)', () => {
  it('stores what was stamped, keeps its delegations running and writes no session.closed', async () => {
    const { model, executor, store, rt, boundary } = setup();
    model.script.push(
      { utteranceId: 'u1', text: '<delegate>time in Tokyo</delegate> Let me', audio: audio(160) },
      { utteranceId: 'u1', text: ' check.', audio: audio(160) },
    );
    await boundary();
    await tick();
    const [request] = executor.submitted;
    expect(request?.query).toBe('time in Tokyo');
    executor.emit({ kind: 'state', session: 's1', incarnation: 0, workId: request!.workId, state: 'RUNNING' });
    await boundary();

    await rt.release('handover');
    const stored = store.events;
    // Every event stamped before the release is in the store, in seq order, and nothing ends the session.
    expect(stored.map((e) => e.seq)).toEqual(stored.map((_, i) => i + 1));
    expect(stored.some((e) => e.type === 'session.closed')).toBe(false);
    // The utterance in progress is left open for the next incarnation to end as discarded.
    const phases = stored.filter((e) => e.type === 'assistant.utterance').map((e) => e.data.phase);
    expect(phases).toEqual(['started']);
    // Its delegation is not cancelled: the next incarnation re-binds it.
    expect(executor.cancelled).toEqual([]);
    expect(stored.filter((e) => e.type === 'work.state').map((e) => e.data.state)).not.toContain('CANCELLED');

    // Once released it takes nothing more: no input, no steps, no second release.
    const count = stored.length;
    rt.handleFrame({ kind: 'text', session: 's1', itemId: 'i1', text: 'hello' });
    await boundary();
    await rt.release('handover');
    await rt.close('client_closed');
    await tick();
    expect(store.events).toHaveLength(count);
  });
});
