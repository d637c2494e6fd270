import type { LimitsConfig } from './tenant-limits.ts';
import { TenantQuotas } from './tenant-quotas.ts';
import { InMemoryUsageMeter, type UsageMeter } from './usage-meter.ts';

export interface TenancyOptions {
  limits?: LimitsConfig;
  /** Where usage is counted; in memory by default (a RedisUsageMeter for a fleet). */
  meter?: UsageMeter;
  /** Monotonic milliseconds for the rate limits (tests pass a fake). */
  now?: () => number;
}

/** The edge's per-tenant admission (quotas) and accounting (meter), built from one options object. */
export interface Tenancy {
  quotas: TenantQuotas;
  meter: UsageMeter;
}

export function createTenancy(options: TenancyOptions = {}): Tenancy {
  return {
    quotas: new TenantQuotas({
      ...(options.limits === undefined ? {} : { limits: options.limits }),
      ...(options.now === undefined ? {} : { now: options.now }),
    }),
    meter: options.meter ?? new InMemoryUsageMeter(),
  };
}
