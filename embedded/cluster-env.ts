import { SETTING_ALIASES } from '@venus/protocol';

/**
 * Settings the cluster sets for each process itself: taken out of what the processes inherit, with
 * their older names, so that a `REDIS_URL` or `VENUS_PORT` in the shell cannot point a process
 * elsewhere or clash with the cluster's value.
 */
const OWNED = [
  'VENUS_PORT',
  'VENUS_HOST',
  'VENUS_REDIS_URL',
  'VENUS_WORKERS',
  'VENUS_RELAY_PORT',
  'VENUS_WORKER_ID',
  'VENUS_RELAY_PUBLIC_URL',
  'VENUS_METRICS_PORT',
  'VENUS_DRAIN_TIMEOUT_MS',
] as const;

/** The environment every cluster process starts from: ours, less what the cluster sets itself. */
export function inheritedEnv(env: Record<string, string | undefined>): Record<string, string> {
  const drop = new Set<string>(OWNED);
  for (const name of OWNED) {
    const alias = SETTING_ALIASES[name];
    if (alias) drop.add(alias);
  }
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && !drop.has(name) && !name.startsWith('VENUS_CLUSTER_')) out[name] = value;
  }
  return out;
}
