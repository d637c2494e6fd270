import type { MiddlewareHandler } from 'hono';
import type { EdgeEnv } from '../app.ts';
import { httpError } from '../auth/http-error.ts';
import { hasScope, mayActOn } from '../auth/principal.ts';
import { admitRequest, reserveSessionSlot, type Tenancy } from './tenancy.ts';

/** 429 with Retry-After when the tenant is over its request rate. Runs after authentication. */
export function limitRequests(tenancy: Tenancy): MiddlewareHandler<EdgeEnv> {
  return async (c, next) => {
    const admitted = await admitRequest(tenancy, c.get('tenant'));
    if (!admitted.ok) {
      return httpError(c, 429, 'rate_limited', admitted.message, { retryAfterMs: admitted.retryAfterMs });
    }
    await next();
  };
}

/**
 * The realtime upgrade's own checks: the `realtime` scope; a `call_id` (OpenAI's way to attach to
 * a live call) may only name a session of the caller's tenant, and attaching is not supported
 * anyway; and a reserved session slot (429 with Retry-After when the tenant is full or opening
 * sessions too fast, on this edge or across the fleet). The reservation travels to `openRealtime` as the `realtime` variable.
 */
export function admitRealtime(tenancy: Tenancy): MiddlewareHandler<EdgeEnv> {
  return async (c, next) => {
    const principal = c.get('principal');
    if (!hasScope(principal, 'realtime')) {
      return httpError(c, 403, 'forbidden', "this credential lacks the 'realtime' scope");
    }
    const callId = c.req.query('call_id');
    if (callId !== undefined) {
      const owner = tenancy.quotas.ownerOf(callId);
      // Another tenant's session is answered exactly as one that does not exist (a 403 would confirm it).
      if (owner === undefined || !mayActOn(principal, owner)) {
        return httpError(c, 404, 'wrong_session', `no live session ${callId}`);
      }
      return httpError(c, 400, 'unsupported_feature', 'attaching to a live session (call_id) is not supported');
    }
    // Only a real upgrade opens a session; a plain GET falls through to the adapter's 426.
    if (c.req.header('upgrade')?.toLowerCase() !== 'websocket') return next();
    const reserved = await reserveSessionSlot(tenancy, principal.tenant);
    if (!reserved.ok) {
      return httpError(c, 429, 'rate_limited', reserved.message, { retryAfterMs: reserved.retryAfterMs });
    }
    c.set('realtime', { principal, ticket: reserved.ticket });
    await next();
  };
}
