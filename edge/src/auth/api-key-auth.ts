import type { MiddlewareHandler } from 'hono';

const SUBPROTOCOL_PREFIX = 'openai-insecure-api-key.';

/** What an upgrade request can carry its key in (all three are what OpenAI clients use). */
export interface KeyCarrier {
  header(name: string): string | undefined;
  query(name: string): string | undefined;
}

/**
 * The API key a request presents: `Authorization: Bearer <key>`, `?api_key=<key>`, or the
 * `openai-insecure-api-key.<key>` WebSocket subprotocol that browsers (which cannot set headers on
 * a WebSocket) send.
 */
export function presentedApiKey(request: KeyCarrier): string | undefined {
  const authorization = request.header('authorization');
  const bearer = authorization?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
  if (bearer !== undefined) return bearer;
  const query = request.query('api_key');
  if (query) return query;
  const protocols = request.header('sec-websocket-protocol')?.split(',') ?? [];
  for (const protocol of protocols) {
    const trimmed = protocol.trim();
    if (trimmed.startsWith(SUBPROTOCOL_PREFIX)) return trimmed.slice(SUBPROTOCOL_PREFIX.length);
  }
  return undefined;
}

/** Compares every key in full so the time taken does not tell how much of a guess was right. */
export function isAcceptedKey(presented: string, keys: readonly string[]): boolean {
  const encoder = new TextEncoder();
  const given = encoder.encode(presented);
  let accepted = false;
  for (const key of keys) {
    const expected = encoder.encode(key);
    let diff = given.length ^ expected.length;
    for (let i = 0; i < expected.length; i++) diff |= expected[i]! ^ (given[i % Math.max(1, given.length)] ?? 0);
    accepted = accepted || diff === 0;
  }
  return accepted;
}

/**
 * Rejects requests without one of `keys` with 401 and an OpenAI-shaped error body; no keys
 * configured means no check (a local, single-user deployment).
 *
 * @example
 *   app.use('/v1/*', requireApiKey(['sk-local-1']));
 */
export function requireApiKey(keys: readonly string[]): MiddlewareHandler {
  return async (c, next) => {
    if (keys.length === 0) return next();
    const presented = presentedApiKey({ header: (name) => c.req.header(name), query: (name) => c.req.query(name) });
    if (presented !== undefined && isAcceptedKey(presented, keys)) return next();
    return c.json(
      {
        error: {
          type: 'authentication_error',
          code: 'unauthorized',
          message: 'missing or unknown API key: send Authorization: Bearer <key>',
          param: null,
          event_id: null,
        },
      },
      401,
    );
  };
}
