import { pickSettings, readSettings, SETTING_GROUPS } from '@venus/protocol';

/**
 * `npm start`'s settings (see protocol/src/settings.ts for each one): the only place the embedded
 * runtime's process reads its environment. The model's own settings (VENUS_MODEL, VENUS_CASCADE_*,
 * ...) are validated by model-from-env.ts from the resolved environment this returns.
 */
export const StartSettingsSchema = pickSettings([
  ...SETTING_GROUPS.logging,
  ...SETTING_GROUPS.storage,
  'VENUS_PORT',
  'VENUS_HOST',
  'VENUS_TLS_PORT',
  'VENUS_TLS_DIR',
  'VENUS_TLS_SELF_SIGNED',
  ...SETTING_GROUPS.tls,
  ...SETTING_GROUPS.redis,
  ...SETTING_GROUPS.auth,
  ...SETTING_GROUPS.inputBudget,
  'VENUS_INFERENCE_THREADS',
  'VENUS_TTS_THREADS',
  ...SETTING_GROUPS.functions,
  'VENUS_TRACING',
]);

export function readStartSettings(env: Record<string, string | undefined> = process.env) {
  return readSettings('npm start', StartSettingsSchema, env);
}
