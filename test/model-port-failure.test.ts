import { FunctionRegistry, InProcessExecutor } from '@venus/harness-functions';
import { SessionConfigSchema } from '@venus/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryTimelineStore, ReferenceModelPort, SessionHost } from '../gpu-worker/src/index.ts';
import { createGatedLookup } from './support/gated-function.ts';
import { recordPlayedTimeline } from './support/played-timeline.ts';
import { until } from './support/until.ts';

/**
 * A crashed inference thread is survived: the port replaces the thread, the session host reopens
 * the model session with the next incarnation and keeps stepping. A request typed after the crash
 * is delegated and answered under the new incarnation; the result of work delegated before the
 * crash fails the incarnation check and expires instead of being spoken into a context that never
 * asked for it.
 */
let port: ReferenceModelPort;

beforeAll(async () => {
  port = await ReferenceModelPort.create();
});
afterAll(async () => {
  await port?.close();
});

describe('model port failure survival', () => {
  it('reopens the session with a new incarnation after its inference thread crashes, and keeps answering', async () => {
    const gated = createGatedLookup();
    const executor = new InProcessExecutor({ registry: new FunctionRegistry([gated.fn]) });
    const store = new MemoryTimelineStore();
    const host = new SessionHost({ model: port, executor, store });
    const { of } = recordPlayedTimeline(host);
    const workState = (workId: string) => of('work.state').filter((e) => e.data.workId === workId);
    try {
      host.handleFrame({
        kind: 'open',
        session: 'crash-1',
        tenant: 't',
        // Results are admitted at the next boundary rather than at a pause: the test need not wait for one.
        config: SessionConfigSchema.parse({ chunkMs: 160, deliveryPolicy: 'interrupt' }),
      });
      host.handleFrame({ kind: 'text', session: 'crash-1', itemId: 'i1', text: "What's the weather in Paris?" });
      await until('the first delegation runs', () => gated.started.length === 1);
      const before = of('assistant.delegate')[0]!.data.workId;

      port.crashForTest(0);
      await until('the session reopens', () =>
        of('session.incarnation').some((e) => e.data.reason === 'model_restarted'),
      );
      const reopened = of('session.incarnation').find((e) => e.data.reason === 'model_restarted')!;
      expect(reopened.data.incarnation).toBe(1);
      expect(port.restarts).toBe(1);
      const runtime = host.session('crash-1')!;
      const stepsAtReopen = runtime.stats.steps;
      await until('stepping continues on the new incarnation', () => runtime.stats.steps >= stepsAtReopen + 5);

      host.handleFrame({ kind: 'text', session: 'crash-1', itemId: 'i2', text: 'What time is it in Tokyo?' });
      await until('the second delegation runs', () => gated.started.length === 2);
      const after = of('assistant.delegate')[1]!;
      expect(after.seq).toBeGreaterThan(reopened.seq);
      gated.release();

      await until('the new request is answered', () =>
        workState(after.data.workId).some((e) => e.data.state === 'DELIVERING'),
      );
      await until('the old result expires', () => workState(before).some((e) => e.data.state === 'EXPIRED'));
      expect(workState(before).find((e) => e.data.state === 'EXPIRED')?.data.reason).toBe('stale_incarnation');
      const admitted = of('work.admitted').find((e) => e.data.workId === after.data.workId)!;
      await until('the answer is spoken', () => of('assistant.audio').some((e) => e.seq > admitted.seq));
      // The crash shows only as the incarnation change: no model error reached the timeline.
      expect(of('session.error').filter((e) => e.data.code.startsWith('model_'))).toEqual([]);
    } finally {
      await host.close();
      await executor.close();
      await store.close();
    }
  });
});
