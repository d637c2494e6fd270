import {
  FUNCTIONS_LIMITS,
  type FunctionSpecInput,
  type FunctionsCatalog,
  TenantIdSchema,
  utf8Length,
  VenusError,
} from '@venus/protocol';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { z } from 'zod';
import type { Principal } from '../auth/principal.ts';
import type { Scope } from '../auth/scopes.ts';
import { limitBody, MAX_REQUEST_BYTES } from '../http/body-limit.ts';
import { apiError, errorResponse } from './api-error.ts';

/** Where the functions API lives. */
export const FUNCTIONS_PATH = '/v1/functions';
export const TENANT_HEADER = 'x-venus-tenant';

/** A name the router keeps for its own sub-path. */
const RESERVED_NAMES = new Set(['secrets']);

interface FunctionsEnv {
  Variables: { tenant: string; principal: Principal; functionsTenant: string };
}

export interface FunctionsApiOptions {
  catalog: FunctionsCatalog;
  /**
   * Whether `x-venus-tenant` may pick the tenant. Always for the deployment operator; otherwise only
   * when the edge is open (no credentials configured) or no auth layer ran at all.
   */
  trustTenantHeader?: boolean;
}

const InvokeBodySchema = z.strictObject({
  args: z.record(z.string(), z.unknown()).default({}),
  version: z.number().int().positive().optional(),
  timeoutMs: z.number().int().min(1).max(120_000).optional(),
});
const SecretBodySchema = z.strictObject({ value: z.string() });
const VersionQuerySchema = z.coerce.number().int().positive();

/**
 * The developer REST API over a FunctionsCatalog: deploy, list, read, version, delete and invoke
 * functions, read their logs, and manage the tenant's secrets. Mount it at FUNCTIONS_PATH after the
 * auth middleware; the tenant is the authenticated principal's. Errors are JSON
 * `{error: {code, message}}`: 400 bad spec or arguments, 401/403 credentials, 404 unknown function
 * (also another tenant's: existence is never revealed), 413 oversized source or arguments.
 *
 * @example
 *   app.use('/v1/*', authenticate(auth));
 *   app.route(FUNCTIONS_PATH, createFunctionsApi({ catalog }));
 */
export function createFunctionsApi(options: FunctionsApiOptions): Hono<FunctionsEnv> {
  const { catalog } = options;
  const api = new Hono<FunctionsEnv>();
  api.onError((error, c) => errorResponse(c, error));
  api.use('*', resolveTenant(options.trustTenantHeader ?? false));

  const deployLimit = limitBody(MAX_REQUEST_BYTES);
  const invokeLimit = limitBody(FUNCTIONS_LIMITS.maxArgsBytes + 4 * 1024);
  const secretLimit = limitBody(FUNCTIONS_LIMITS.maxSecretBytes + 1024);
  const deploy = requireScope('functions:deploy');
  const invoke = requireScope('functions:invoke');
  const read = requireScope('functions:deploy', 'functions:invoke');

  api.post('/', deploy, deployLimit, async (c) => {
    const spec = (await readJson(c)) as FunctionSpecInput;
    const kind = (spec as { kind?: { source?: unknown; script?: unknown } } | null)?.kind;
    const code = kind?.source ?? kind?.script;
    if (typeof code === 'string' && utf8Length(code) > FUNCTIONS_LIMITS.maxSourceBytes) {
      return apiError(c, 413, 'payload_too_large', `the source is over ${FUNCTIONS_LIMITS.maxSourceBytes} bytes`);
    }
    if (typeof spec?.name === 'string' && RESERVED_NAMES.has(spec.name)) {
      return apiError(c, 400, 'invalid_arguments', `"${spec.name}" is reserved; pick another name`);
    }
    const record = await catalog.deploy(c.var.functionsTenant, spec);
    return c.json(
      { name: record.name, version: record.version, deployedAtMs: record.deployedAtMs, kind: record.spec.kind.type },
      201,
    );
  });

  api.get('/', read, async (c) => c.json({ functions: await catalog.list(c.var.functionsTenant) }));

  api.get('/secrets', deploy, async (c) => c.json({ secrets: await catalog.listSecrets(c.var.functionsTenant) }));
  api.put('/secrets/:secret', deploy, secretLimit, async (c) => {
    const body = SecretBodySchema.safeParse(await readJson(c));
    if (!body.success) return apiError(c, 400, 'invalid_arguments', 'send {"value": "<secret>"}');
    await catalog.setSecret(c.var.functionsTenant, c.req.param('secret'), body.data.value);
    return c.body(null, 204);
  });
  api.delete('/secrets/:secret', deploy, async (c) => {
    const deleted = await catalog.deleteSecret(c.var.functionsTenant, c.req.param('secret'));
    return deleted ? c.body(null, 204) : apiError(c, 404, 'not_found', `no secret "${c.req.param('secret')}"`);
  });

  api.get('/:name', read, async (c) => {
    const name = c.req.param('name');
    const versionText = c.req.query('version');
    let version: number | undefined;
    if (versionText !== undefined) {
      const parsed = VersionQuerySchema.safeParse(versionText);
      if (!parsed.success) return apiError(c, 400, 'invalid_arguments', 'version must be a positive integer');
      version = parsed.data;
    }
    const record = await catalog.get(c.var.functionsTenant, name, version);
    if (record === null) return notFound(c, name, version);
    return c.json({ name: record.name, version: record.version, deployedAtMs: record.deployedAtMs, spec: record.spec });
  });

  api.get('/:name/versions', read, async (c) => {
    const name = c.req.param('name');
    const versions = await catalog.listVersions(c.var.functionsTenant, name);
    return versions.length === 0 ? notFound(c, name) : c.json({ name, versions });
  });

  api.delete('/:name', deploy, async (c) => {
    const name = c.req.param('name');
    return (await catalog.delete(c.var.functionsTenant, name)) ? c.body(null, 204) : notFound(c, name);
  });

  api.post('/:name/invoke', invoke, invokeLimit, async (c) => {
    const body = InvokeBodySchema.safeParse(await readJson(c, true));
    if (!body.success) {
      const issue = body.error.issues[0];
      return apiError(
        c,
        400,
        'invalid_arguments',
        `${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`,
      );
    }
    if (utf8Length(JSON.stringify(body.data.args)) > FUNCTIONS_LIMITS.maxArgsBytes) {
      return apiError(c, 413, 'payload_too_large', `arguments are over ${FUNCTIONS_LIMITS.maxArgsBytes} bytes`);
    }
    const { args, version, timeoutMs } = body.data;
    const result = await catalog.invoke(c.var.functionsTenant, c.req.param('name'), args, {
      ...(version === undefined ? {} : { version }),
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      signal: c.req.raw.signal,
    });
    return c.json(result);
  });

  api.get('/:name/logs', deploy, async (c) => {
    const limit = Math.max(1, Math.min(Number(c.req.query('limit') ?? 20) || 20, FUNCTIONS_LIMITS.maxLogEntries));
    return c.json({ logs: await catalog.logs(c.var.functionsTenant, c.req.param('name'), { limit }) });
  });

  return api;
}

function notFound(c: Context, name: string, version?: number): Response {
  const which = version === undefined ? '' : ` version ${version}`;
  return apiError(c, 404, 'function_not_found', `no function "${name}"${which}`);
}

/** The authenticated tenant; the header only where the brief allows it (operator, open edge, no auth). */
function resolveTenant(trustHeader: boolean): MiddlewareHandler<FunctionsEnv> {
  return async (c, next) => {
    const principal = c.get('principal') as Principal | undefined;
    const header = c.req.header(TENANT_HEADER);
    const headerAllowed = trustHeader || principal === undefined || principal.kind === 'open' || principal.operator;
    const tenant = (header !== undefined && headerAllowed ? header : undefined) ?? c.get('tenant') ?? 'default';
    if (!TenantIdSchema.safeParse(tenant).success) {
      return apiError(
        c,
        400,
        'invalid_arguments',
        `${TENANT_HEADER} must be 1-64 characters of A-Z, a-z, 0-9, ".", "_", "-"`,
      );
    }
    c.set('functionsTenant', tenant);
    await next();
  };
}

/** 403 unless the principal (when there is one) holds one of `scopes`. */
function requireScope(...scopes: Scope[]): MiddlewareHandler<FunctionsEnv> {
  return async (c, next) => {
    const principal = c.get('principal') as Principal | undefined;
    if (principal !== undefined && !scopes.some((scope) => principal.scopes.includes(scope))) {
      return apiError(c, 403, 'forbidden', `this credential lacks the '${scopes.join("' or '")}' scope`);
    }
    await next();
  };
}

async function readJson(c: Context, optional = false): Promise<unknown> {
  const text = await c.req.text();
  if (optional && text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new VenusError('invalid_json', 'the request body is not JSON');
  }
}
