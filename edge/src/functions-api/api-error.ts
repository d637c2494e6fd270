import { createLogger, type ErrorCode, errorCodeInfo, VenusError } from '@venus/protocol';
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

const log = createLogger('edge.functions-api');

/**
 * `{error: {type, code, message}}` with the status saying what kind of failure; the same shape as
 * the rest of the edge's errors, the `type` from the protocol's error table.
 */
export function apiError(c: Context, status: ContentfulStatusCode, code: ErrorCode, message: string): Response {
  const type = errorCodeInfo(code).clientType;
  return c.json({ error: { type, code, message, param: null } }, status);
}

/**
 * A thrown VenusError with a client-facing code as its status from the error table; anything else
 * (a server-side code, a bug) is a 500 whose details stay in the server log.
 */
export function errorResponse(c: Context, error: unknown): Response {
  if (VenusError.isInstance(error)) {
    const info = errorCodeInfo(error.code);
    if (info.clientType !== 'server_error') return apiError(c, info.httpStatus, error.code, error.message);
  }
  log.error({ err: error, method: c.req.method, path: c.req.path }, 'functions API failed');
  return apiError(c, 500, 'internal_error', 'the functions API failed; see the server log');
}
