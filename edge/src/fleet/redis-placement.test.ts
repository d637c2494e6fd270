import { randomUUID } from 'node:crypto';
import { fleetKeys } from '@venus/protocol';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { FleetMember } from '../../../gpu-worker/src/fleet/index.ts';
import { RedisPlacement } from './redis-placement.ts';

/** Polls until `check` holds; the test's own timeout bounds it. */
async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 5));
}

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function redisUrl(): string {
  const url = process.env.REDIS_URL;
  if (!url) throw new Error('REDIS_URL is set by the test setup (a real redis-server)');
  return url;
}

function fleet() {
  const prefix = `t:placement:${randomUUID()}:`;
  const admin = new Redis(redisUrl());
  cleanups.push(async () => {
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length > 0) await admin.del(...keys);
    await admin.quit();
  });
  const join = async (id: string, maxSessions: number, model?: [string, string], sessions = 0) => {
    const m = new FleetMember({
      redisUrl: redisUrl(),
      prefix,
      id,
      url: `ws://${id}.test:8081/relay`,
      maxSessions,
      sessions: () => sessions,
      ...(model ? { capabilities: { model: model[0], modelRevision: model[1] } } : {}),
    });
    cleanups.push(() => m.leave());
    await m.heartbeat();
    return m;
  };
  const placement = (variant?: string) => {
    const p = new RedisPlacement({ url: redisUrl(), prefix, ...(variant ? { variant } : {}) });
    cleanups.push(() => p.close());
    return p;
  };
  return { prefix, admin, join, placement };
}

describe('RedisPlacement on a real Redis', () => {
  it('says which workers are registered: a heartbeat that expired or a worker that left is not', async () => {
    const f = fleet();
    await f.join('alive', 4);
    const gone = await f.join('gone', 4);
    await gone.leave();
    const expiring = new FleetMember({
      redisUrl: redisUrl(),
      prefix: f.prefix,
      id: 'expiring',
      url: 'ws://expiring.test:8081/relay',
      maxSessions: 4,
      sessions: () => 0,
      ttlMs: 1,
    });
    cleanups.push(() => expiring.leave());
    await expiring.heartbeat();
    await until(async () => (await f.admin.exists(fleetKeys(f.prefix).worker('expiring'))) === 0);
    const placement = f.placement();
    expect([...(await placement.registered(['alive', 'gone', 'expiring', 'never']))]).toEqual(['alive']);
    expect(await placement.registered([])).toEqual(new Set());
  });

  it('places only on workers of the variant asked for: a model name, or model@revision', async () => {
    const f = fleet();
    await f.join('ref-1', 10, ['venus-reference', 'r1']);
    await f.join('ref-2', 10, ['venus-reference', 'r2']);
    await f.join('cascade-1', 10, ['venus-cascade', 'c1']);
    await f.join('unlabelled', 10);
    const byName = f.placement('venus-reference');
    const picked = new Set<string>();
    for (let i = 0; i < 6; i++) picked.add((await byName.place(`s${i}`)).id);
    expect([...picked].sort()).toEqual(['ref-1', 'ref-2']);
    const byRevision = f.placement('venus-reference@r2');
    for (let i = 0; i < 3; i++) expect((await byRevision.place(`r${i}`)).id).toBe('ref-2');
    // A failover re-places with the same placement: never onto another variant, even if it has room.
    expect((await f.placement('venus-cascade').place('c', { exclude: [] })).id).toBe('cascade-1');
    await expect(f.placement('venus-cascade').place('c2', { exclude: ['cascade-1'] })).rejects.toMatchObject({
      code: 'model_unavailable',
      message: expect.stringContaining('venus-cascade'),
    });
  });

  it('takes any worker without a variant', async () => {
    const f = fleet();
    await f.join('a', 1, ['venus-reference', 'r1']);
    await f.join('b', 1);
    const any = f.placement();
    const ids = [(await any.place('x')).id, (await any.place('y')).id].sort();
    expect(ids).toEqual(['a', 'b']);
  });

  it('never places on a worker whose heartbeat expired, and prunes it from the set', async () => {
    const f = fleet();
    await f.join('live', 10, ['venus-reference', 'r1'], 9);
    await f.join('expired', 10, ['venus-reference', 'r1']);
    // The heartbeat's TTL running out is the key vanishing; deleting it is the same state at once.
    await f.admin.del(fleetKeys(f.prefix).worker('expired'));
    expect(await f.admin.smembers(fleetKeys(f.prefix).workers)).toContain('expired');
    expect((await f.placement().place('s')).id).toBe('live');
    expect(await f.admin.smembers(fleetKeys(f.prefix).workers)).toEqual(['live']);
    await expect(f.placement().place('s2')).rejects.toMatchObject({ code: 'model_unavailable' });
  });

  it('fills workers of unequal capacity in proportion to it (least loaded by sessions / capacity)', async () => {
    const f = fleet();
    const capacity = { small: 10, mid: 20, big: 30 };
    for (const [id, max] of Object.entries(capacity)) await f.join(id, max);
    const p = f.placement();
    const counts: Record<string, number> = { small: 0, mid: 0, big: 0 };
    for (let i = 0; i < 30; i++) counts[(await p.place(`s${i}`)).id]! += 1;
    // Half full overall: each worker holds half its capacity, within one session.
    for (const [id, max] of Object.entries(capacity)) expect(Math.abs(counts[id]! - max / 2)).toBeLessThanOrEqual(1);
  });
});
