import { randomUUID } from 'node:crypto';
import { BullmqDelegationProducer, delegationKeys, jobIdFor } from '@venus/harness-functions';
import type { DelegationRequest } from '@venus/protocol';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { removeRedisKeys, testRedisUrl } from './support/redis.ts';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * Regression (issue 14, the Redis-restart test that timed out in a full run): the producer accepts a
 * delegation in one script (record, slots, QUEUED on the events stream) and then adds its BullMQ
 * job. When Redis was killed after the accept had run but before its reply came back, ioredis sent
 * the script again after the restart; it answered "duplicate" (the record existed) and the producer
 * returned without adding the job. The session had been told QUEUED and the work never ran.
 * Seen on the stored data: the work record QUEUED with 0 attempts, and no job.
 *
 * Here that state is made directly on a real Redis (the job removed after a first submit, as if its
 * add had never happened) and the same request is submitted again, as the resent accept is.
 */
describe('a delegation whose accept reply was lost', () => {
  function fixture() {
    const prefix = `test:accept-lost:${randomUUID()}:`;
    const producer = new BullmqDelegationProducer({ url: testRedisUrl(), prefix, blockMs: 500 });
    const keys = delegationKeys(prefix);
    const queue = new Queue(keys.queueName, { connection: { url: testRedisUrl() }, prefix: keys.bullPrefix });
    const admin = new Redis(testRedisUrl());
    cleanups.push(
      () => removeRedisKeys(prefix),
      () => admin.quit(),
      () => queue.close(),
      () => producer.close(),
    );
    const request = (n: number): DelegationRequest => ({
      workId: `work_lost_${n}`,
      session: 'sess_lost',
      incarnation: 0,
      tenant: 'default',
      query: 'time in Tokyo',
      evidenceCutoffSeq: 1,
      chunk: 1,
      createdAtMs: Date.now(),
    });
    const job = (workId: string) => queue.getJob(jobIdFor(workId));
    return { producer, keys, queue, admin, request, job };
  }

  it('adds the job the first accept never got to add, once', async () => {
    const f = fixture();
    const req = f.request(1);
    await f.producer.submit(req);
    expect(await f.job(req.workId)).toBeDefined();
    // The state a lost reply leaves: the work recorded and announced, no job.
    await f.queue.remove(jobIdFor(req.workId));
    expect(await f.job(req.workId)).toBeUndefined();
    expect(await f.admin.hget(f.keys.work(req.workId), 'attempts')).toBe('0');

    await f.producer.submit(req);
    const job = await f.job(req.workId);
    expect(job?.data.request.workId).toBe(req.workId);
    // A second resubmission while it waits adds nothing: BullMQ keeps one job per id.
    await f.producer.submit(req);
    expect(await f.queue.getJobCounts('wait')).toEqual({ wait: 1 });
    // QUEUED was announced once, by the first accept.
    const events = await f.admin.xrange(f.keys.events(f.producer.hostId), '-', '+');
    expect(
      events.filter(([, fields]) => fields.some((field) => field.includes(`"workId":"${req.workId}"`))),
    ).toHaveLength(1);
  });

  it('does not run again a work that has started or ended', async () => {
    const f = fixture();
    const marks: [number, string[]][] = [
      [2, ['attempts', '1', 'state', 'RUNNING']],
      [3, ['end', 'result', 'state', 'COMPLETED']],
    ];
    for (const [n, fields] of marks) {
      const req = f.request(n);
      await f.producer.submit(req);
      await f.queue.remove(jobIdFor(req.workId));
      await f.admin.hset(f.keys.work(req.workId), ...fields);
      await f.producer.submit(req);
      expect(await f.job(req.workId), fields.join(' ')).toBeUndefined();
    }
  });
});
