import { type SessionConfig, SessionUpdateSchema } from '@venus/protocol';
import type { Hono } from 'hono';
import { z } from 'zod';
import type { EdgeEnv } from '../app.ts';
import { applySessionUpdate, initialSessionState } from '../realtime/session-state.ts';
import { MAX_CLIENT_TOKEN_CHARS } from './client-token.ts';
import type { EdgeAuth } from './edge-auth.ts';
import { httpError } from './http-error.ts';
import { jsonBody, smallBody } from './json-body.ts';
import { hasScope } from './principal.ts';

const MIN_TTL_S = 10;
const MAX_TTL_S = 7200;
const DEFAULT_TTL_S = 600;

/** Session fields a client token carries; the rest of OpenAI's session object means nothing here. */
const CARRIED_FIELDS = [
  'instructions',
  'voice',
  'input_audio_format',
  'output_audio_format',
  'audio',
  'venus',
  'output_modalities',
  'modalities',
] as const;

const ClientSecretRequestSchema = z.object({
  expires_after: z
    .object({
      anchor: z.literal('created_at').optional(),
      seconds: z.number().int().min(MIN_TTL_S).max(MAX_TTL_S).optional(),
    })
    .optional(),
  session: SessionUpdateSchema.shape.session.optional(),
});

/**
 * `POST /v1/realtime/client_secrets` as OpenAI's: a server holding an API key with the `realtime`
 * scope mints `{ value: 'ek_…', expires_at, session }` for a browser, which then opens
 * `/v1/realtime` with the `openai-insecure-api-key.<value>` subprotocol (or as Bearer). Session
 * settings in the request become the session's starting settings; a client can still change them.
 *
 * @example
 *   mountClientSecretRoutes(app, auth, defaultConfig);
 */
export function mountClientSecretRoutes(app: Hono<EdgeEnv>, auth: EdgeAuth, defaultConfig: SessionConfig): void {
  app.post('/v1/realtime/client_secrets', smallBody(), async (c) => {
    const principal = c.get('principal');
    if (principal.kind === 'client_token') return httpError(c, 403, 'forbidden', 'a client token cannot mint tokens');
    if (!hasScope(principal, 'realtime')) return httpError(c, 403, 'forbidden', "this key lacks the 'realtime' scope");
    const body = await jsonBody(c, ClientSecretRequestSchema, true);
    if (!body.ok) return body.response;

    const session = carriedSession(body.value.session);
    if (session !== undefined) {
      const checked = applySessionUpdate(initialSessionState('check', defaultConfig), session);
      if (!checked.ok) {
        const { code, message, param } = checked.error;
        return httpError(c, 400, code, message, param === undefined ? {} : { param });
      }
    }
    const ttl = body.value.expires_after?.seconds ?? DEFAULT_TTL_S;
    const expiresAt = Math.floor(auth.now() / 1000) + ttl;
    const { value } = await auth.tokens.mint({
      tenant: principal.tenant,
      keyId: principal.keyId,
      scopes: ['realtime'],
      expiresAt,
      ...(session === undefined ? {} : { session }),
    });
    if (value.length > MAX_CLIENT_TOKEN_CHARS) {
      const message = `the session settings make the token over ${MAX_CLIENT_TOKEN_CHARS} characters; send long instructions with session.update`;
      return httpError(c, 400, 'invalid_arguments', message, { param: 'session' });
    }
    return c.json({
      value,
      expires_at: expiresAt,
      session: { type: 'realtime', object: 'realtime.session', ...session },
    });
  });
}

type SessionSettings = z.infer<typeof SessionUpdateSchema>['session'];

function carriedSession(session: SessionSettings | undefined): SessionSettings | undefined {
  if (session === undefined) return undefined;
  const carried: Record<string, unknown> = {};
  for (const field of CARRIED_FIELDS) if (session[field] !== undefined) carried[field] = session[field];
  return Object.keys(carried).length === 0 ? undefined : (carried as SessionSettings);
}
