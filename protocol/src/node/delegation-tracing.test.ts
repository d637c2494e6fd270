import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DelegationRequest } from '../delegation.ts';
import type { DelegationExecutor } from '../delegation-executor.ts';
import type { WorkerToEdgeFrame } from '../relay-frames.ts';
import type { TimelineDraft } from '../timeline.ts';
import { DelegationTracing } from './delegation-tracing.ts';
import { startTracing, type Tracing, traceparentOf } from './tracing.ts';

/** A fake executor (unit test): records the traceparent active during each submit; refuses on demand. */
class FakeExecutor implements DelegationExecutor {
  readonly seen: (string | undefined)[] = [];
  refuse = false;
  closed = false;
  async submit(): Promise<void> {
    this.seen.push(traceparentOf());
    if (this.refuse) throw new Error('queue full');
  }
  async cancel(): Promise<void> {}
  subscribe(): () => void {
    return () => {};
  }
  async close(): Promise<void> {
    this.closed = true;
  }
}

const request = (workId: string): DelegationRequest => ({
  workId,
  session: 's1',
  incarnation: 0,
  tenant: 't1',
  query: 'what time is it in Tokyo',
  evidenceCutoffSeq: 1,
  chunk: 0,
  createdAtMs: 0,
});
let seq = 0;
const frame = (draft: TimelineDraft): WorkerToEdgeFrame =>
  ({
    kind: 'timeline',
    session: 's1',
    event: { ...draft, session: 's1', seq: ++seq, chunk: 0, atMs: 0 },
  }) as WorkerToEdgeFrame;

const exporter = new InMemorySpanExporter();
let tracing: Tracing | null;
beforeAll(async () => {
  tracing = await startTracing({ service: 'unit', exporter, immediate: true });
});
afterAll(async () => {
  await tracing?.shutdown();
});

describe('DelegationTracing', () => {
  it('makes the enqueue span active during submit, adds admission, ends the trace at the terminal state', async () => {
    exporter.reset();
    const fake = new FakeExecutor();
    const traced = new DelegationTracing();
    await traced.wrap(fake).submit(request('w1'));
    expect(traced.size).toBe(1);
    traced.observe(
      frame({ stream: 'background', type: 'work.admitted', data: { workId: 'w1', resultSeq: 5, mode: 'speak' } }),
    );
    traced.observe(frame({ stream: 'background', type: 'work.state', data: { workId: 'w1', state: 'DELIVERED' } }));
    expect(traced.size).toBe(0);
    const spans = exporter.getFinishedSpans();
    const root = spans.find((s) => s.name === 'session_host.delegation')!;
    const enqueue = spans.find((s) => s.name === 'queue.enqueue')!;
    expect(root.attributes['venus.work_state']).toBe('DELIVERED');
    expect(fake.seen[0]).toBe(`00-${enqueue.spanContext().traceId}-${enqueue.spanContext().spanId}-01`);
    expect(spans.find((s) => s.name === 'session_host.admission')?.parentSpanContext?.spanId).toBe(
      root.spanContext().spanId,
    );
  });

  it('a refused submit ends its trace with an error; close ends what is still open', async () => {
    exporter.reset();
    const fake = new FakeExecutor();
    const traced = new DelegationTracing();
    const executor = traced.wrap(fake);
    fake.refuse = true;
    await expect(executor.submit(request('w2'))).rejects.toThrow('queue full');
    fake.refuse = false;
    await executor.submit(request('w3'));
    expect(traced.size).toBe(1);
    await executor.close();
    expect(fake.closed).toBe(true);
    expect(traced.size).toBe(0);
    const roots = exporter.getFinishedSpans().filter((s) => s.name === 'session_host.delegation');
    expect(roots.map((s) => [s.attributes['venus.work_id'], s.attributes['venus.work_state']])).toEqual([
      ['w2', 'refused'],
      ['w3', 'closed'],
    ]);
    expect(roots[0]?.status.message).toBe('queue full');
  });
});
