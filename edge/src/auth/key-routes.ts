import type { Context, Hono } from 'hono';
import { z } from 'zod';
import type { EdgeEnv } from '../app.ts';
import { keyPrefix } from './api-key-format.ts';
import type { EdgeAuth } from './edge-auth.ts';
import { httpError } from './http-error.ts';
import { jsonBody, smallBody } from './json-body.ts';
import type { ApiKeyRecord } from './key-store.ts';
import { hasScope, mayActOn, type Principal } from './principal.ts';
import { ScopeSchema } from './scopes.ts';

const TenantSchema = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'tenant: 1-64 of A-Z a-z 0-9 _ . -');
const TEN_YEARS_S = 10 * 365 * 24 * 3600;

const CreateKeySchema = z.object({
  tenant: TenantSchema.optional(),
  name: z.string().max(128).optional(),
  scopes: z.array(ScopeSchema).min(1),
  expires_in_seconds: z.number().int().positive().max(TEN_YEARS_S).optional(),
});

const RotateKeySchema = z.object({
  /** How long the replaced key keeps working; absent: until it is revoked. */
  previous_expires_in_seconds: z.number().int().nonnegative().max(TEN_YEARS_S).optional(),
});

/**
 * Key management: `POST /v1/keys` and `GET /v1/keys` (scope `admin`), `DELETE /v1/keys/:id` and
 * `POST /v1/keys/:id/rotate` (scope `admin`, or the key acting on itself). An admin acts on its own
 * tenant only, and grants no scope it lacks; the operator's bootstrap key acts on every tenant.
 *
 * @example
 *   mountKeyRoutes(app, auth); // after app.use('/v1/*', authenticate(auth))
 */
export function mountKeyRoutes(app: Hono<EdgeEnv>, auth: EdgeAuth): void {
  app.post('/v1/keys', smallBody(), async (c) => {
    const principal = c.get('principal');
    if (!hasScope(principal, 'admin')) return forbidden(c, "creating keys needs the 'admin' scope");
    const body = await jsonBody(c, CreateKeySchema);
    if (!body.ok) return body.response;
    const tenant = body.value.tenant ?? principal.tenant;
    if (!mayActOn(principal, tenant)) return forbidden(c, `this key cannot create keys for tenant ${tenant}`);
    const extra = body.value.scopes.filter((scope) => !hasScope(principal, scope));
    if (!principal.operator && extra.length > 0)
      return forbidden(c, `cannot grant scopes you lack: ${extra.join(', ')}`);
    const expiresIn = body.value.expires_in_seconds;
    const { key, record } = await auth.keys.issue({
      tenant,
      scopes: body.value.scopes,
      name: body.value.name ?? null,
      expiresAt: expiresIn === undefined ? null : auth.now() + expiresIn * 1000,
    });
    return c.json({ ...keyView(record), key }, 201);
  });

  app.get('/v1/keys', async (c) => {
    const principal = c.get('principal');
    if (!hasScope(principal, 'admin')) return forbidden(c, "listing keys needs the 'admin' scope");
    const asked = c.req.query('tenant');
    if (asked !== undefined && !mayActOn(principal, asked)) {
      return forbidden(c, `this key cannot list keys of tenant ${asked}`);
    }
    const tenant = asked ?? (principal.operator ? undefined : principal.tenant);
    const records = await auth.keys.list(tenant);
    return c.json({ object: 'list', data: records.map(keyView) });
  });

  app.delete('/v1/keys/:id', async (c) => {
    const found = await ownedKey(c, auth, c.get('principal'), c.req.param('id'));
    if (!found.ok) return found.response;
    const record = await auth.keys.revoke(found.record.id);
    // Its live sessions on this edge end now; other edges' at their next re-check (LiveKeySessions).
    auth.sessions.endKey(found.record.id, `API key ${found.record.id} was revoked`);
    return c.json({ ...keyView(record ?? found.record), object: 'api_key.deleted', deleted: true });
  });

  app.post('/v1/keys/:id/rotate', smallBody(), async (c) => {
    const found = await ownedKey(c, auth, c.get('principal'), c.req.param('id'));
    if (!found.ok) return found.response;
    if (found.record.revokedAt !== null) {
      return httpError(c, 409, 'invalid_arguments', `key ${found.record.id} is revoked; issue a new one`);
    }
    const body = await jsonBody(c, RotateKeySchema, true);
    if (!body.ok) return body.response;
    const grace = body.value.previous_expires_in_seconds;
    const rotated = await auth.keys.rotate(found.record.id, grace === undefined ? null : auth.now() + grace * 1000);
    if (rotated === undefined) return notFound(c, found.record.id);
    return c.json(
      { ...keyView(rotated.issued.record), key: rotated.issued.key, previous: keyView(rotated.previous) },
      201,
    );
  });
}

/** A key as listings show it: never the secret nor its hash. Times in epoch seconds, as OpenAI's. */
export function keyView(record: ApiKeyRecord): Record<string, unknown> {
  const seconds = (ms: number | null) => (ms === null ? null : Math.floor(ms / 1000));
  return {
    object: 'api_key',
    id: record.id,
    prefix: keyPrefix(record.id),
    tenant: record.tenant,
    name: record.name,
    scopes: record.scopes,
    created_at: seconds(record.createdAt),
    expires_at: seconds(record.expiresAt),
    revoked_at: seconds(record.revokedAt),
    rotated_from: record.rotatedFrom,
    rotated_to: record.rotatedTo,
  };
}

type Found = { ok: true; record: ApiKeyRecord } | { ok: false; response: Response };

/** The key `id` if this principal may manage it: an admin of its tenant, or the key itself. */
async function ownedKey(c: Context, auth: EdgeAuth, principal: Principal, id: string): Promise<Found> {
  const record = await auth.keys.get(id);
  if (record === undefined) {
    if (principal.keyId === id) {
      const message = `key ${id} is configured in the environment; remove it there`;
      return { ok: false, response: httpError(c, 400, 'invalid_arguments', message) };
    }
    return { ok: false, response: notFound(c, id) };
  }
  const self = principal.kind === 'api_key' && principal.keyId === id;
  if (self || (hasScope(principal, 'admin') && mayActOn(principal, record.tenant))) return { ok: true, record };
  // Another tenant's key is answered exactly as one that does not exist: a 403 would confirm it does.
  if (!mayActOn(principal, record.tenant)) return { ok: false, response: notFound(c, id) };
  return { ok: false, response: forbidden(c, `this credential cannot manage key ${id}`) };
}

function forbidden(c: Context, message: string): Response {
  return httpError(c, 403, 'forbidden', message);
}

function notFound(c: Context, id: string): Response {
  return httpError(c, 404, 'invalid_arguments', `no key ${id}`, { param: 'id' });
}
