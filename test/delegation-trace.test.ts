import { randomUUID } from 'node:crypto';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { createBuiltinFunctions } from '@venus/harness-functions';
import { startTracing, type Tracing } from '@venus/protocol/node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RealtimeClient } from '../embedded/demo/realtime-client.ts';
import { type EmbeddedRuntime, startEmbeddedRuntime } from '../embedded/embedded-runtime.ts';
import { removeRedisKeys, testRedisUrl } from './support/redis.ts';
import { until } from './support/until.ts';

/**
 * One trace per delegation across session host -> queue -> harness -> function -> admission:
 * the embedded runtime on real Redis (BullMQ producer and consumer, the trace context carried in
 * the job data as a W3C traceparent), spans collected by the SDK's in-memory exporter.
 */
const prefix = `test:trace:${randomUUID()}:`;
const exporter = new InMemorySpanExporter();
let tracing: Tracing | null;
let runtime: EmbeddedRuntime;

beforeAll(async () => {
  tracing = await startTracing({ service: 'venus-test', exporter, immediate: true });
  runtime = await startEmbeddedRuntime({
    port: 0,
    redisUrl: testRedisUrl(),
    redisPrefix: prefix,
    functions: createBuiltinFunctions({ latencyMs: 300 }),
  });
});
afterAll(async () => {
  await runtime?.close();
  await tracing?.shutdown();
  await removeRedisKeys(prefix);
});

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

it('a delivered delegation is one trace: delegation, enqueue, harness run, function run, admission', async () => {
  const client = await RealtimeClient.connect({ url: `${runtime.url.replace('http', 'ws')}/v1/realtime` });
  client.send({ type: 'session.update', session: { venus: { chunk_ms: 160 } } });
  client.startMicrophone();
  client.say('What time is it in Tokyo?');
  const delivered = await client.waitForTimeline(
    (e) => e.type === 'work.state' && e.data.state === 'DELIVERED',
    60_000,
  );
  if (delivered.type !== 'work.state') throw new Error('unreachable');
  const workId = delivered.data.workId;
  await client.close();

  const ofWork = () =>
    exporter
      .getFinishedSpans()
      .filter((s) => s.attributes['venus.work_id'] === workId || s.name === 'session_host.admission');
  await until('the delegation span to end', () => ofWork().some((s) => s.name === 'session_host.delegation'));
  const root = ofWork().find((s) => s.name === 'session_host.delegation')!;
  const traceId = root.spanContext().traceId;
  const inTrace = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
  const byName = (name: string) => {
    const found = inTrace.filter((s) => s.name === name);
    expect(found, name).toHaveLength(1);
    return found[0]!;
  };
  expect(parentOf(root)).toBeUndefined();
  expect(root.attributes['venus.work_state']).toBe('DELIVERED');
  const enqueue = byName('queue.enqueue');
  const run = byName('harness.run');
  const fn = byName('function.run');
  const admission = byName('session_host.admission');
  expect(parentOf(enqueue)).toBe(root.spanContext().spanId);
  // The harness continues the trace from the job's traceparent: the enqueue span is its parent.
  expect(parentOf(run)).toBe(enqueue.spanContext().spanId);
  expect(parentOf(fn)).toBe(run.spanContext().spanId);
  expect(fn.attributes['venus.function']).toBe('world_clock');
  expect(parentOf(admission)).toBe(root.spanContext().spanId);
  expect(inTrace.map((s) => s.resource.attributes['service.name'])).toContain('venus-test');
  // One trace per delegation: no span of this work in another trace.
  const elsewhere = exporter
    .getFinishedSpans()
    .filter((s) => s.attributes['venus.work_id'] === workId && s.spanContext().traceId !== traceId);
  expect(elsewhere).toEqual([]);
}, 120_000);
