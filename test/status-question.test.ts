import { createTimelineStore, ReferenceModelPort, SessionHost } from '@venus/gpu-worker';
import { createWorkStatus, FunctionRegistry, InProcessExecutor } from '@venus/harness-functions';
import { SessionConfigSchema } from '@venus/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatedLookup } from './support/gated-function.ts';
import { recordPlayedTimeline } from './support/played-timeline.ts';
import { until } from './support/until.ts';

/**
 * "How's that going?" while a delegation runs is answered from the session's work state: the model
 * delegates the question, the harness's work_status function answers it from the work snapshot the
 * delegation carries, and the answer is spoken at a pause — while the original work is still running.
 */
let port: ReferenceModelPort;
beforeAll(async () => {
  port = await ReferenceModelPort.create();
});
afterAll(async () => {
  await port.close();
});

describe('status questions', () => {
  it('answers "how is that going?" from work state while the work still runs', async () => {
    const gated = createGatedLookup();
    const executor = new InProcessExecutor({ registry: new FunctionRegistry([gated.fn, createWorkStatus()]) });
    const store = createTimelineStore();
    const host = new SessionHost({ model: port, executor, store });
    const { events } = recordPlayedTimeline(host);
    host.handleFrame({ kind: 'open', session: 's', tenant: 't', config: SessionConfigSchema.parse({ chunkMs: 160 }) });
    host.handleFrame({ kind: 'text', session: 's', itemId: 'i1', text: "What's the weather in Paris?" });
    await until('the lookup runs', () => gated.started.length === 1);
    await until('the first reply ends', () =>
      events.some((e) => e.type === 'assistant.control' && e.data.decision === 'turn_eos'),
    );
    host.handleFrame({ kind: 'text', session: 's', itemId: 'i2', text: "How's that going?" });
    await until(
      'the status answer is spoken',
      () => events.filter((e) => e.type === 'work.state' && e.data.state === 'DELIVERING').length >= 1,
    );
    await until('its text is out', () =>
      events.some((e) => e.type === 'assistant.text' && /still running/.test(e.data.delta)),
    );
    const said = events
      .filter((e) => e.type === 'assistant.text')
      .map((e) => (e.type === 'assistant.text' ? e.data.delta : ''))
      .join('');
    expect(said).toMatch(/weather in Paris.*still running/);
    const lookup = events.find((e) => e.type === 'assistant.delegate' && /Paris/.test(e.data.query));
    const lookupState = events
      .filter(
        (e) => e.type === 'work.state' && lookup?.type === 'assistant.delegate' && e.data.workId === lookup.data.workId,
      )
      .at(-1);
    expect(lookupState?.type === 'work.state' && lookupState.data.state).toBe('RUNNING');
    gated.release();
    await host.close();
    await executor.close();
    await store.close();
  }, 90_000);
});
