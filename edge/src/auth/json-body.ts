import type { Context, MiddlewareHandler } from 'hono';
import type { z } from 'zod';
import { limitBody } from '../http/body-limit.ts';
import { httpError } from './http-error.ts';

export type Body<T> = { ok: true; value: T } | { ok: false; response: Response };

/** The request's JSON body checked against `schema`, or the 400 response to send instead. */
export async function jsonBody<T>(c: Context, schema: z.ZodType<T>, optional = false): Promise<Body<T>> {
  const text = await c.req.text();
  let json: unknown = {};
  if (text.trim() !== '' || !optional) {
    try {
      json = JSON.parse(text);
    } catch {
      return { ok: false, response: httpError(c, 400, 'invalid_json', 'the request body is not JSON') };
    }
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0];
  const param = issue?.path.join('.') || undefined;
  const message = `${param ?? 'body'}: ${issue?.message ?? 'invalid'}`;
  return { ok: false, response: httpError(c, 400, 'invalid_arguments', message, param ? { param } : {}) };
}

/** Management requests are small: anything over `maxBytes` is refused (413) as it streams in. */
export function smallBody(maxBytes = 32 * 1024): MiddlewareHandler {
  return limitBody(maxBytes);
}
