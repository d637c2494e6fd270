import { createLogger, VenusError } from '@venus/protocol';
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

const STATUS_OF_CODE: Partial<Record<string, ContentfulStatusCode>> = {
  invalid_json: 400,
  invalid_event: 400,
  invalid_arguments: 400,
  unsupported_feature: 400,
  unauthorized: 401,
  function_not_found: 404,
  work_not_found: 404,
  rate_limited: 429,
};

const log = createLogger('edge.functions-api');

const TYPE_OF_STATUS: Partial<Record<number, string>> = {
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'invalid_request_error',
  429: 'rate_limit_error',
};

/**
 * `{error: {type, code, message}}` with the status saying what kind of failure; the same shape as
 * the rest of the edge's errors, with codes of the functions API (`payload_too_large`, `not_found`)
 * alongside the runtime's.
 */
export function apiError(c: Context, status: ContentfulStatusCode, code: string, message: string): Response {
  const type = TYPE_OF_STATUS[status] ?? (status >= 500 ? 'server_error' : 'invalid_request_error');
  return c.json({ error: { type, code, message, param: null } }, status);
}

/** A thrown VenusError as its 4xx; anything else is a 500 whose details stay in the server log. */
export function errorResponse(c: Context, error: unknown): Response {
  if (VenusError.isInstance(error)) {
    const status = STATUS_OF_CODE[error.code];
    if (status !== undefined) return apiError(c, status, error.code, error.message);
  }
  log.error({ err: error, method: c.req.method, path: c.req.path }, 'functions API failed');
  return apiError(c, 500, 'internal_error', 'the functions API failed; see the server log');
}
