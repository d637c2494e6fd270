import { pickSettings, readSettings, SETTING_GROUPS, SETTINGS } from '@venus/protocol';
import { z } from 'zod';
import { DEFAULT_DELEGATION_PREFIX } from './bullmq/delegation-keys.ts';

/**
 * The `harness` process's settings (see protocol/src/settings.ts for each one): the only place that
 * process reads its environment. The Redis URL is required: the harness takes its work from BullMQ.
 */
export const HarnessSettingsSchema = pickSettings([
  ...SETTING_GROUPS.logging,
  ...SETTING_GROUPS.redis,
  'VENUS_HARNESS_PREFIX',
  'VENUS_HARNESS_CONCURRENCY',
  'VENUS_HARNESS_LOCK_DURATION_MS',
  'VENUS_HARNESS_STALLED_INTERVAL_MS',
  'VENUS_HARNESS_MAX_STALLED_COUNT',
  'VENUS_HARNESS_PROGRESS_FIRST_MS',
  'VENUS_HARNESS_PROGRESS_EVERY_MS',
  'VENUS_HARNESS_DRAIN_MS',
  'VENUS_HARNESS_BUILTIN_LATENCY_MS',
  'VENUS_HARNESS_FUNCTIONS_MODULE',
  'VENUS_SIP_CONTROL_URL',
  'VENUS_SIP_CONTROL_TOKEN',
  ...SETTING_GROUPS.functions,
  'VENUS_METRICS_PORT',
  'VENUS_HOST',
  'VENUS_TRACING',
]).extend({
  VENUS_REDIS_URL: SETTINGS.VENUS_REDIS_URL.pipe(
    z.string({ error: 'required: the harness takes its work from Redis' }),
  ),
});

export function readHarnessSettings(env: Record<string, string | undefined> = process.env) {
  const read = readSettings('harness', HarnessSettingsSchema, env);
  const { VENUS_HARNESS_PREFIX } = read.settings;
  return {
    ...read,
    settings: {
      ...read.settings,
      VENUS_HARNESS_PREFIX: VENUS_HARNESS_PREFIX ?? DEFAULT_DELEGATION_PREFIX,
    },
  };
}
