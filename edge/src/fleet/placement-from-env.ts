import { VenusError } from '@venus/protocol';
import { RedisPlacement } from './redis-placement.ts';
import { StaticPlacement } from './static-placement.ts';
import type { WorkerPlacement } from './worker-placement.ts';

/**
 * The placement a deployment configures: `VENUS_WORKERS` (a static list of relay urls) wins;
 * otherwise `REDIS_URL` reads the fleet registry (with `VENUS_FLEET_PREFIX`, default none), placing
 * only on workers of `VENUS_MODEL_VARIANT` when it is set (a model name or `model@revision`). The
 * static list knows no variants: every listed worker is taken to serve the one model.
 *
 * @example
 *   const placement = placementFromEnv(process.env);
 */
export function placementFromEnv(env: Record<string, string | undefined>): WorkerPlacement {
  if (env.VENUS_WORKERS?.trim()) return StaticPlacement.fromList(env.VENUS_WORKERS);
  if (env.REDIS_URL) {
    return new RedisPlacement({
      url: env.REDIS_URL,
      ...(env.VENUS_FLEET_PREFIX ? { prefix: env.VENUS_FLEET_PREFIX } : {}),
      ...(env.VENUS_MODEL_VARIANT ? { variant: env.VENUS_MODEL_VARIANT } : {}),
    });
  }
  throw new VenusError(
    'invalid_arguments',
    'no GPU workers configured: set VENUS_WORKERS=ws://host:8081/relay[,...] or REDIS_URL for the fleet registry',
  );
}
