import type { Hono } from 'hono';
import type { EdgeEnv } from '../app.ts';
import { httpError } from '../auth/http-error.ts';
import { hasScope, mayActOn } from '../auth/principal.ts';
import type { Tenancy } from './tenancy.ts';

/**
 * `GET /v1/usage` (scope `usage:read`): the caller's tenant's counters, or `?tenant=` for the
 * operator. Audio and function time in seconds.
 *
 * @example
 *   mountUsageRoutes(app, tenancy);
 *   // GET /v1/usage -> { object: 'venus.usage', tenant, audio_in_seconds, audio_out_seconds, ... }
 */
export function mountUsageRoutes(app: Hono<EdgeEnv>, tenancy: Tenancy): void {
  app.get('/v1/usage', async (c) => {
    const principal = c.get('principal');
    if (!hasScope(principal, 'usage:read'))
      return httpError(c, 403, 'forbidden', "this key lacks the 'usage:read' scope");
    const tenant = c.req.query('tenant') ?? principal.tenant;
    if (!mayActOn(principal, tenant)) return httpError(c, 403, 'forbidden', `this key cannot read tenant ${tenant}`);
    const usage = await tenancy.meter.read(tenant);
    const seconds = (ms: number) => Math.round(ms) / 1000;
    return c.json({
      object: 'venus.usage',
      tenant,
      since: usage.since === null ? null : Math.floor(usage.since / 1000),
      sessions: usage.sessions,
      live_sessions: tenancy.quotas.liveSessions(tenant),
      audio_in_seconds: seconds(usage.audioInMs),
      audio_out_seconds: seconds(usage.audioOutMs),
      delegations: usage.delegations,
      function_seconds: seconds(usage.functionMs),
    });
  });
}
