import { pickSettings, readSettings, SETTING_GROUPS } from '@venus/protocol';

/**
 * The `edge` process's settings (see protocol/src/settings.ts for each one): the only place the
 * edge process reads its environment. Auth, tenancy, TLS and placement parse their own values
 * further from the resolved environment this returns.
 */
export const EdgeSettingsSchema = pickSettings([
  ...SETTING_GROUPS.logging,
  'VENUS_PORT',
  'VENUS_HOST',
  ...SETTING_GROUPS.tls,
  ...SETTING_GROUPS.redis,
  'VENUS_FLEET_PREFIX',
  ...SETTING_GROUPS.auth,
  ...SETTING_GROUPS.inputBudget,
  'VENUS_RELAY_TOKEN',
  'VENUS_WORKERS',
  'VENUS_MODEL_VARIANT',
]);

export function readEdgeSettings(env: Record<string, string | undefined> = process.env) {
  return readSettings('edge', EdgeSettingsSchema, env);
}
