import { randomUUID } from 'node:crypto';
import {
  BullmqDelegationConsumer,
  BullmqDelegationProducer,
  type BullmqDelegationProducerOptions,
  FunctionRegistry,
  InProcessExecutor,
  RedisTimelineReader,
  type VenusFunction,
} from '@venus/harness-functions';
import type { DelegationRequest, WorkEvent } from '@venus/protocol';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryTimelineStore, RedisTimelineStore } from '../gpu-worker/src/timeline/index.ts';
import { delegationExecutorContract, echoFunction, gatedFunction } from './contracts/delegation-executor-contract.ts';
import { removeRedisKeys } from './support/redis.ts';

delegationExecutorContract('in-process', async (functions, options) => {
  const timeline = new MemoryTimelineStore();
  const executor = new InProcessExecutor({ registry: new FunctionRegistry(functions), timeline, ...options });
  return { executor, timeline, close: () => executor.close().then(() => timeline.close()) };
});

delegationExecutorContract('bullmq', async (functions, options) => {
  const url = process.env.REDIS_URL;
  if (!url) throw new Error('REDIS_URL is not set: the global setup in test/setup/redis-server.ts provides it');
  const prefix = `dx:${randomUUID()}:`;
  const { concurrency, progressFirstMs, progressEveryMs, requestTimeoutMs, maxInFlightPerSession, planner, oralizer } =
    options;
  // The host writes the timeline through its store; the harness reads it through its own reader, as across processes.
  const timeline = new RedisTimelineStore({ url, prefix });
  const reader = new RedisTimelineReader({ url, prefix });
  const consumer = new BullmqDelegationConsumer({
    url,
    prefix,
    registry: new FunctionRegistry(functions),
    timeline: reader,
    drainMs: 0,
    ...(planner === undefined ? {} : { planner }),
    ...(oralizer === undefined ? {} : { oralizer }),
    ...(concurrency === undefined ? {} : { concurrency }),
    ...(progressFirstMs === undefined ? {} : { progressFirstMs }),
    ...(progressEveryMs === undefined ? {} : { progressEveryMs }),
  });
  const executor = new BullmqDelegationProducer({
    url,
    prefix,
    ...(requestTimeoutMs === undefined ? {} : { requestTimeoutMs }),
    ...(maxInFlightPerSession === undefined ? {} : { maxInFlightPerSession }),
  });
  await consumer.waitUntilReady();
  return {
    executor,
    timeline,
    close: async () => {
      await consumer.close();
      await executor.close();
      await Promise.all([timeline.close(), reader.close()]);
      await removeRedisKeys(prefix, url);
    },
  };
});

describe('BullMQ delegation queue', () => {
  const url = () => process.env.REDIS_URL!;
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  function harness(functions: readonly VenusFunction[]) {
    const prefix = `dq:${randomUUID()}:`;
    cleanups.push(async () => {
      const admin = new Redis(url());
      try {
        const keys = await admin.keys(`${prefix}*`);
        if (keys.length > 0) await admin.del(...keys);
      } finally {
        await admin.quit();
      }
    });
    const consumer = () => {
      const c = new BullmqDelegationConsumer({
        url: url(),
        prefix,
        registry: new FunctionRegistry(functions),
        drainMs: 0,
      });
      cleanups.push(() => c.close());
      return c;
    };
    const producer = (options: Partial<BullmqDelegationProducerOptions> = {}) => {
      const p = new BullmqDelegationProducer({ url: url(), prefix, ...options });
      cleanups.push(() => p.close());
      const events: WorkEvent[] = [];
      p.subscribe((event) => events.push(event));
      return { producer: p, events };
    };
    return { consumer, producer };
  }

  const request = (query: string, over: Partial<DelegationRequest> = {}): DelegationRequest => ({
    workId: `w-${randomUUID().slice(0, 12)}`,
    session: `s-${randomUUID().slice(0, 8)}`,
    incarnation: 1,
    tenant: 'acme',
    query,
    evidenceCutoffSeq: 0,
    chunk: 0,
    createdAtMs: Date.now(),
    ...over,
  });

  it('limits in-flight work per tenant across sessions and hosts', async () => {
    const gated = gatedFunction();
    const { consumer, producer } = harness([gated.fn, echoFunction]);
    await consumer().waitUntilReady();
    const a = producer({ maxInFlightPerTenant: 2 }).producer;
    const b = producer({ maxInFlightPerTenant: 2 }).producer;
    await a.submit(request('gated t1'));
    await b.submit(request('gated t2'));
    await expect(a.submit(request('gated t3'))).rejects.toMatchObject({ code: 'delegate_limit_reached' });
    await b.submit(request('gated t4', { tenant: 'other' }));
  });

  // The closing worker's own fetch, still in flight, often brings the handed-back job straight back
  // to it; the consumer must hand it on again rather than run it, or close() waits on it for ever.
  it('hands running work to another harness when one closes, without a second result', async () => {
    const gated = gatedFunction();
    const { consumer, producer } = harness([gated.fn]);
    const first = consumer();
    await first.waitUntilReady();
    const { producer: host, events } = producer();
    const req = request('gated handover');
    await host.submit(req);
    const firstRun = await gated.started('handover');
    await expect.poll(() => first.activeWorkIds()).toEqual([req.workId]);
    await first.close();
    expect(firstRun.ctx.signal.aborted).toBe(true);
    await consumer().waitUntilReady();
    await expect.poll(() => gated.runs.length).toBe(2);
    gated.runs[1]!.release('Handed over.');
    await expect.poll(() => events.filter((e) => e.kind === 'result').length).toBe(1);
    const states = events.flatMap((e) => (e.kind === 'state' ? [e.state] : []));
    expect(states).toEqual(['QUEUED', 'RUNNING', 'QUEUED', 'RUNNING']);
    expect(await host.getWorkState(req.workId)).toMatchObject({
      state: 'COMPLETED',
      end: 'result',
      attempts: 2,
      session: req.session,
      tenant: 'acme',
      incarnation: 1,
    });
  });

  it('keeps the work record: QUEUED while nobody runs it, CANCELLED after a cancel, gone when unknown', async () => {
    const { producer } = harness([echoFunction]);
    const { producer: host, events } = producer();
    const req = request('echo nobody listens');
    await host.submit(req);
    expect(await host.getWorkState(req.workId)).toMatchObject({ state: 'QUEUED', attempts: 0 });
    await host.cancel(req.workId, 'changed my mind');
    expect(await host.getWorkState(req.workId)).toMatchObject({
      state: 'CANCELLED',
      end: 'cancelled',
      cancelReason: 'changed my mind',
    });
    await expect
      .poll(() => events.map((e) => (e.kind === 'state' ? e.state : e.kind)))
      .toEqual(['QUEUED', 'CANCELLING', 'CANCELLED']);
    expect(await host.getWorkState('never-submitted')).toBeNull();
  });
});
