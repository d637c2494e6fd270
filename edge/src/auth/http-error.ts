import type { ErrorCode } from '@venus/protocol';
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

const TYPE_OF_STATUS: Partial<Record<number, string>> = {
  401: 'authentication_error',
  403: 'permission_error',
  429: 'rate_limit_error',
};

/**
 * An OpenAI-shaped error response (`{ error: { type, code, message, param } }`): the status says
 * what kind of failure, the code is the runtime's stable one.
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
  const type = TYPE_OF_STATUS[status] ?? (status >= 500 ? 'server_error' : 'invalid_request_error');
  return c.json({ error: { type, code, message, param: options.param ?? null, event_id: null } }, status);
}
