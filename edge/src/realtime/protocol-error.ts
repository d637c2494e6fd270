import type { ErrorCode } from '@venus/protocol';

/**
 * A client-visible protocol error before it becomes an `error` event: the stable code, a message
 * that names what was wrong, and the offending field where there is one.
 */
export interface ProtocolError {
  code: ErrorCode;
  message: string;
  param?: string;
}

/** Codes that blame the client's input; the rest are the server's fault. */
const CLIENT_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'invalid_json',
  'invalid_event',
  'unknown_event_type',
  'audio_too_large',
  'audio_wrong_format',
  'wrong_session',
  'unsupported_feature',
  'session_closed',
  'work_not_found',
  'invalid_arguments',
  'unauthorized',
]);

/** OpenAI's error `type` for a code. */
export function errorTypeOf(code: ErrorCode): string {
  if (code === 'rate_limited') return 'rate_limit_error';
  if (code === 'unauthorized') return 'authentication_error';
  return CLIENT_CODES.has(code) ? 'invalid_request_error' : 'server_error';
}

/** The OpenAI-shaped `error` server event body (the caller adds `event_id`). */
export function errorEvent(
  error: ProtocolError,
  clientEventId: string | null,
): { type: 'error'; error: Record<string, unknown> } {
  return {
    type: 'error',
    error: {
      type: errorTypeOf(error.code),
      code: error.code,
      message: error.message,
      event_id: clientEventId,
      ...(error.param === undefined ? {} : { param: error.param }),
    },
  };
}
