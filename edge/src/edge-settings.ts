import { pickSettings, readSettings } from '@venus/protocol';

/**
 * The `edge` process's settings (see protocol/src/settings.ts for each one): the only place the
 * edge process reads its environment. Auth, tenancy, TLS and placement parse their own values
 * further from the resolved environment this returns.
 */
export const EdgeSettingsSchema = pickSettings([
  'VENUS_LOG_LEVEL',
  'VENUS_LOG_PII',
  'VENUS_PORT',
  'VENUS_HOST',
  'VENUS_TLS_KEY_FILE',
  'VENUS_TLS_CERT_FILE',
  'VENUS_REDIS_URL',
  'VENUS_REDIS_PREFIX',
  'VENUS_FLEET_PREFIX',
  'VENUS_API_KEYS',
  'VENUS_ADMIN_KEY',
  'VENUS_AUTH_SECRET',
  'VENUS_TENANT_LIMITS',
  'VENUS_INPUT_AUDIO_RATE',
  'VENUS_INPUT_AUDIO_BURST_MS',
  'VENUS_RELAY_TOKEN',
  'VENUS_WORKERS',
]);

export function readEdgeSettings(env: Record<string, string | undefined> = process.env) {
  return readSettings('edge', EdgeSettingsSchema, env);
}
