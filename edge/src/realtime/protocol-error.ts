import { type ErrorCode, errorCodeInfo } from '@venus/protocol';

/**
 * A client-visible protocol error before it becomes an `error` event: the stable code, a message
 * that names what was wrong, and the offending field where there is one.
 */
export interface ProtocolError {
  code: ErrorCode;
  message: string;
  param?: string;
}

/** OpenAI's error `type` for a code, from the protocol's one error table. */
export function errorTypeOf(code: ErrorCode): string {
  return errorCodeInfo(code).clientType;
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
