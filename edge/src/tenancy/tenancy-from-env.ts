import { createLogger, inputAudioBudgetFromEnv } from '@venus/protocol';
import { FleetQuotas } from './fleet-quotas.ts';
import { RedisUsageMeter } from './redis-usage-meter.ts';
import { createTenancy, type Tenancy } from './tenancy.ts';
import { limitsFromEnv } from './tenant-limits.ts';

/** Redis errors of the fleet-wide limits are reported at most this often. */
const ERROR_REPORT_MS = 60_000;
const log = createLogger('edge.tenancy');

/**
 * The edge's tenancy from the environment: limits from `VENUS_TENANT_LIMITS`. With `REDIS_URL`
 * (keys under `VENUS_REDIS_PREFIX`, default `venus:`), usage is counted in Redis and the request
 * rate, session-start rate and concurrent sessions are counted across every edge of the fleet.
 * Each session's input audio budget comes from `VENUS_INPUT_AUDIO_RATE` and `VENUS_INPUT_AUDIO_BURST_MS`.
 *
 * @example
 *   const tenancy = tenancyFromEnv(process.env);
 *   // on shutdown: await closeTenancy(tenancy);
 */
export function tenancyFromEnv(env: Record<string, string | undefined>): Tenancy {
  const limits = limitsFromEnv(env);
  const inputAudio = inputAudioBudgetFromEnv(env);
  if (!env.REDIS_URL) return createTenancy({ limits, inputAudio });
  const prefix = env.VENUS_REDIS_PREFIX ?? 'venus:';
  let reportedAt = Number.NEGATIVE_INFINITY;
  const onError = (error: unknown) => {
    if (Date.now() - reportedAt < ERROR_REPORT_MS) return;
    reportedAt = Date.now();
    log.warn({ err: error }, 'fleet-wide limits unavailable, counting on this edge only');
  };
  return createTenancy({
    limits,
    inputAudio,
    meter: new RedisUsageMeter({ url: env.REDIS_URL, prefix }),
    fleet: new FleetQuotas({ url: env.REDIS_URL, prefix, onError }),
  });
}

/** Flushes the usage meter and stops the fleet-wide limits' refresh. */
export async function closeTenancy(tenancy: Tenancy): Promise<void> {
  await Promise.all([tenancy.meter.close(), tenancy.fleet?.close()]);
}
