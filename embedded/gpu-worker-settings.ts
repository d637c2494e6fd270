import { hostname as machineName } from 'node:os';
import { pickSettings, readSettings, SETTING_GROUPS } from '@venus/protocol';

/**
 * The `gpu-worker` process's settings (see protocol/src/settings.ts for each one): the only place
 * that process reads its environment. The model's own settings are validated by model-from-env.ts
 * from the resolved environment this returns.
 */
export const GpuWorkerSettingsSchema = pickSettings([
  ...SETTING_GROUPS.logging,
  ...SETTING_GROUPS.storage,
  ...SETTING_GROUPS.inputBudget,
  'VENUS_RELAY_PORT',
  'VENUS_HOST',
  'VENUS_RELAY_TOKEN',
  'VENUS_WORKER_ID',
  'VENUS_RELAY_PUBLIC_URL',
  'VENUS_MAX_SESSIONS',
  'VENUS_INFERENCE_THREADS',
  'VENUS_TTS_THREADS',
  ...SETTING_GROUPS.redis,
  'VENUS_HARNESS_PREFIX',
  'VENUS_FLEET_PREFIX',
  'VENUS_FLEET_TTL_MS',
  'VENUS_DRAIN_TIMEOUT_MS',
  'VENUS_TRACING',
]);

export function readGpuWorkerSettings(env: Record<string, string | undefined> = process.env) {
  const read = readSettings('gpu-worker', GpuWorkerSettingsSchema, env);
  // The host name is the natural id of a worker (a pod's name in Kubernetes).
  return { ...read, settings: { ...read.settings, VENUS_WORKER_ID: read.settings.VENUS_WORKER_ID ?? machineName() } };
}
