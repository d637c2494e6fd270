import { z } from 'zod';

const Bucket = z.object({ perMinute: z.number().nonnegative(), burst: z.number().positive() });

/**
 * Limits of one tenant. Each is optional: an absent limit does not apply.
 * - `requests`: authenticated HTTP requests (the WebSocket upgrade included);
 * - `sessions`: realtime sessions opened;
 * - `maxConcurrentSessions`: realtime sessions open at once;
 * - `audioIn`: seconds of input audio across the tenant's sessions (`perMinute` of 60 is one
 *   real-time stream), so a client cannot push audio faster than it was agreed to pay for.
 */
export const TenantLimitsSchema = z.object({
  requests: Bucket.optional(),
  sessions: Bucket.optional(),
  maxConcurrentSessions: z.number().int().nonnegative().optional(),
  audioIn: Bucket.optional(),
});
export type TenantLimits = z.infer<typeof TenantLimitsSchema>;

export const LimitsConfigSchema = z.object({
  /** What every tenant gets unless `tenants` says otherwise. */
  default: TenantLimitsSchema.optional(),
  /** Per-tenant overrides, merged over `default` field by field. */
  tenants: z.record(z.string(), TenantLimitsSchema).optional(),
});
export type LimitsConfig = z.infer<typeof LimitsConfigSchema>;

export function limitsOf(config: LimitsConfig, tenant: string): TenantLimits {
  return { ...config.default, ...config.tenants?.[tenant] };
}

/**
 * Limits from `VENUS_TENANT_LIMITS`, a JSON LimitsConfig, e.g.
 * `{"default":{"maxConcurrentSessions":20,"sessions":{"perMinute":60,"burst":10}}}`.
 */
export function limitsFromEnv(env: Record<string, string | undefined>): LimitsConfig {
  const text = env.VENUS_TENANT_LIMITS;
  if (!text) return {};
  const parsed = LimitsConfigSchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(`VENUS_TENANT_LIMITS: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data;
}
