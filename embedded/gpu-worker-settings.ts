import { hostname as machineName } from 'node:os';
import { pickSettings, readSettings } from '@venus/protocol';

/**
 * The `gpu-worker` process's settings (see protocol/src/settings.ts for each one): the only place
 * that process reads its environment. The model's own settings are validated by model-from-env.ts
 * from the resolved environment this returns.
 */
export const GpuWorkerSettingsSchema = pickSettings([
  'VENUS_LOG_LEVEL',
  'VENUS_LOG_PII',
  'VENUS_TIMELINE_RETENTION',
  'VENUS_TIMELINE_MAX_EVENTS',
  'VENUS_MEDIA_WINDOW_MS',
  'VENUS_MEDIA_RETENTION',
  'VENUS_RELAY_PORT',
  'VENUS_HOST',
  'VENUS_RELAY_TOKEN',
  'VENUS_WORKER_ID',
  'VENUS_RELAY_PUBLIC_URL',
  'VENUS_MAX_SESSIONS',
  'VENUS_INFERENCE_THREADS',
  'VENUS_TTS_THREADS',
  'VENUS_REDIS_URL',
  'VENUS_REDIS_PREFIX',
  'VENUS_HARNESS_PREFIX',
  'VENUS_FLEET_PREFIX',
  'VENUS_DRAIN_TIMEOUT_MS',
]);

export function readGpuWorkerSettings(env: Record<string, string | undefined> = process.env) {
  const read = readSettings('gpu-worker', GpuWorkerSettingsSchema, env);
  // The host name is the natural id of a worker (a pod's name in Kubernetes).
  return { ...read, settings: { ...read.settings, VENUS_WORKER_ID: read.settings.VENUS_WORKER_ID ?? machineName() } };
}
