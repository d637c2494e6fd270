import { FUNCTIONS_LIMITS } from '@venus/protocol';
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { httpError } from '../auth/http-error.ts';

/**
 * The largest body any edge route accepts (a function deployment: its source plus the JSON around
 * it). The app applies it to every route, so a route that forgets its own, smaller limit still
 * never holds more than this per request.
 */
export const MAX_REQUEST_BYTES = FUNCTIONS_LIMITS.maxSourceBytes + 64 * 1024;

/**
 * Refuses a request body over `maxBytes` with 413 `payload_too_large`. The bytes are counted as
 * they stream in (Hono's `bodyLimit`), so a chunked body with no `Content-Length` is cut off at the
 * limit rather than read whole first: at most `maxBytes` plus one network chunk is ever held. A
 * declared `Content-Length` over the limit is refused before anything is read.
 *
 * @example
 *   app.post('/v1/keys', limitBody(32 * 1024), async (c) => jsonBody(c, CreateKeySchema));
 */
export function limitBody(maxBytes: number): MiddlewareHandler {
  return bodyLimit({
    maxSize: maxBytes,
    onError: (c) => httpError(c, 413, 'payload_too_large', `the request body is over ${maxBytes} bytes`),
  });
}
