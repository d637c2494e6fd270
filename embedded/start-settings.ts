import { pickSettings, readSettings } from '@venus/protocol';

/**
 * `npm start`'s settings (see protocol/src/settings.ts for each one): the only place the embedded
 * runtime's process reads its environment. The model's own settings (VENUS_MODEL, VENUS_CASCADE_*,
 * ...) are validated by model-from-env.ts from the resolved environment this returns.
 */
export const StartSettingsSchema = pickSettings([
  'VENUS_LOG_LEVEL',
  'VENUS_LOG_PII',
  'VENUS_TIMELINE_RETENTION',
  'VENUS_TIMELINE_MAX_EVENTS',
  'VENUS_MEDIA_WINDOW_MS',
  'VENUS_MEDIA_RETENTION',
  'VENUS_PORT',
  'VENUS_HOST',
  'VENUS_TLS_KEY_FILE',
  'VENUS_TLS_CERT_FILE',
  'VENUS_REDIS_URL',
  'VENUS_REDIS_PREFIX',
  'VENUS_API_KEYS',
  'VENUS_ADMIN_KEY',
  'VENUS_AUTH_SECRET',
  'VENUS_TENANT_LIMITS',
  'VENUS_INPUT_AUDIO_RATE',
  'VENUS_INPUT_AUDIO_BURST_MS',
  'VENUS_INFERENCE_THREADS',
  'VENUS_TTS_THREADS',
  'VENUS_FUNCTIONS_ALLOW_PRIVATE',
  'VENUS_SECRETS_KEY',
  'VENUS_PLANNER_BASE_URL',
  'VENUS_PLANNER_MODEL',
  'VENUS_PLANNER_API_KEY',
]);

export function readStartSettings(env: Record<string, string | undefined> = process.env) {
  return readSettings('npm start', StartSettingsSchema, env);
}
