import type { MiddlewareHandler } from 'hono';
import type { EdgeEnv } from '../app.ts';
import { presentedApiKey } from './api-key-auth.ts';
import type { EdgeAuth } from './edge-auth.ts';
import { httpError } from './http-error.ts';
import { hasScope } from './principal.ts';
import type { Scope } from './scopes.ts';

/**
 * Checks the request's credential (Bearer header, `api_key` query, or the
 * `openai-insecure-api-key.<credential>` WebSocket subprotocol) and records who it acts for as
 * `principal` and `tenant`; 401 when it is missing, unknown, expired, revoked or forged.
 *
 * @example
 *   app.use('/v1/*', authenticate(auth));
 *   app.get('/v1/usage', requireScope('usage:read'), handler);
 */
export function authenticate(auth: EdgeAuth): MiddlewareHandler<EdgeEnv> {
  return async (c, next) => {
    const presented = presentedApiKey({ header: (name) => c.req.header(name), query: (name) => c.req.query(name) });
    const verified = await auth.authenticate(presented);
    if (!verified.ok) return httpError(c, 401, 'unauthorized', verified.message);
    c.set('principal', verified.principal);
    c.set('tenant', verified.principal.tenant);
    await next();
  };
}

/** 403 unless the authenticated principal holds `scope`. */
export function requireScope(scope: Scope): MiddlewareHandler<EdgeEnv> {
  return async (c, next) => {
    if (!hasScope(c.get('principal'), scope)) {
      return httpError(c, 403, 'forbidden', `this credential lacks the '${scope}' scope`);
    }
    await next();
  };
}
