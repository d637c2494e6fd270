import { type ErrorCode, errorCodeInfo } from '@venus/protocol';
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

/**
 * An OpenAI-shaped error response (`{ error: { type, code, message, param } }`): the status says
 * what kind of failure, the code is the runtime's stable one and its `type` comes from the protocol's
 * error table. `status` is usually `errorCodeInfo(code).httpStatus`; call sites that answer otherwise
 * (a revoked key as 409) say so.
 *
 * @example
 *   return httpError(c, 429, 'rate_limited', 'too many sessions', { retryAfterMs: 2000 });
 */
export function httpError(
  c: Context,
  status: ContentfulStatusCode,
  code: ErrorCode,
  message: string,
  options: { param?: string; retryAfterMs?: number } = {},
): Response {
  if (options.retryAfterMs !== undefined) {
    c.header('Retry-After', String(Math.max(1, Math.ceil(options.retryAfterMs / 1000))));
  }
  const type = errorCodeInfo(code).clientType;
  return c.json({ error: { type, code, message, param: options.param ?? null, event_id: null } }, status);
}
