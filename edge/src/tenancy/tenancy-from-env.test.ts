import { describe, expect, it } from 'vitest';
import { RedisUsageMeter } from './redis-usage-meter.ts';
import { closeTenancy, tenancyFromEnv } from './tenancy-from-env.ts';
import { InMemoryUsageMeter } from './usage-meter.ts';

describe('tenancyFromEnv', () => {
  it('counts in memory without Redis, with the limits from VENUS_TENANT_LIMITS', () => {
    const tenancy = tenancyFromEnv({ VENUS_TENANT_LIMITS: '{"default":{"maxConcurrentSessions":1}}' });
    expect(tenancy.meter).toBeInstanceOf(InMemoryUsageMeter);
    const first = tenancy.quotas.reserveSession('acme');
    expect(first.ok).toBe(true);
    expect(tenancy.quotas.reserveSession('acme').ok).toBe(false);
  });

  it('gives every edge of a fleet the same usage counters in Redis', async () => {
    const url = process.env.REDIS_URL;
    if (!url) throw new Error('REDIS_URL is set by the test setup');
    const prefix = `test:tenancy-env:${process.pid}:${Date.now()}:`;
    const env = { REDIS_URL: url, VENUS_REDIS_PREFIX: prefix };
    const edgeA = tenancyFromEnv(env);
    const edgeB = tenancyFromEnv(env);
    try {
      expect(edgeA.meter).toBeInstanceOf(RedisUsageMeter);
      expect(edgeA.fleet).toBeDefined();
      edgeA.meter.add('acme', { audioInMs: 400, delegations: 1 });
      edgeB.meter.add('acme', { audioInMs: 600 });
      await closeTenancy(edgeA);
      expect(await edgeB.meter.read('acme')).toMatchObject({ audioInMs: 1000, delegations: 1 });
    } finally {
      await closeTenancy(edgeB);
      await closeTenancy(edgeA);
    }
  });
});
