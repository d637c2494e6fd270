import { RedisUsageMeter } from './redis-usage-meter.ts';
import { createTenancy, type Tenancy } from './tenancy.ts';
import { limitsFromEnv } from './tenant-limits.ts';

/**
 * The edge's tenancy from the environment: limits from `VENUS_TENANT_LIMITS`, and usage counted in
 * Redis when `REDIS_URL` is set (keys under `VENUS_REDIS_PREFIX`, default `venus:`), so every edge of
 * a fleet reads and adds to the same counters. Rate limits and session quotas stay per process.
 *
 * @example
 *   const tenancy = tenancyFromEnv(process.env);
 *   // on shutdown: await tenancy.meter.close();
 */
export function tenancyFromEnv(env: Record<string, string | undefined>): Tenancy {
  const limits = limitsFromEnv(env);
  return env.REDIS_URL
    ? createTenancy({
        limits,
        meter: new RedisUsageMeter({ url: env.REDIS_URL, prefix: env.VENUS_REDIS_PREFIX ?? 'venus:' }),
      })
    : createTenancy({ limits });
}
