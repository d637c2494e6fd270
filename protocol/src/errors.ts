/**
 * Where a failure's blame lies and how clients see it: `invalid_request_error` blames the client's
 * input, the others are OpenAI's `type`s for their kind of failure.
 */
export type ClientErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'server_error';

export interface ErrorCodeInfo {
  /** Whether the same request may succeed later (the default of `VenusError.retryable`). */
  retryable: boolean;
  /** The HTTP status the edge answers with when this code ends a request; only the edge uses it. */
  httpStatus: 400 | 401 | 403 | 404 | 409 | 413 | 429 | 500 | 503 | 504;
  /** The `type` of the OpenAI-shaped error clients get (realtime `error` events and HTTP bodies). */
  clientType: ClientErrorType;
}

const input = { retryable: false, httpStatus: 400, clientType: 'invalid_request_error' } as const;
const server = { retryable: false, httpStatus: 500, clientType: 'server_error' } as const;

/**
 * The one table of error codes: every code the runtime raises, sends or answers with is a key here,
 * and everything else (the code enum in timeline and relay schemas, retryability, the edge's HTTP
 * statuses and error types) is derived from it.
 */
export const ERROR_TABLE = {
  invalid_json: input,
  invalid_event: input,
  unknown_event_type: input,
  audio_too_large: input,
  audio_wrong_format: input,
  wrong_session: { ...input, httpStatus: 404 },
  unsupported_feature: input,
  /** The session (or executor) ended while the request was in flight. */
  session_closed: { ...input, httpStatus: 409 },
  delegate_parse_error: server,
  delegate_query_too_long: server,
  delegate_limit_reached: { ...server, httpStatus: 429 },
  result_too_long: server,
  timeline_seq_conflict: { ...server, httpStatus: 409 },
  /** The timeline store stayed unavailable past the writer's bound of held events. */
  timeline_unavailable: { ...server, retryable: true, httpStatus: 503 },
  stale_incarnation: { ...server, httpStatus: 409 },
  model_step_failed: { ...server, retryable: true },
  model_unavailable: { ...server, retryable: true, httpStatus: 503 },
  function_not_found: { retryable: false, httpStatus: 404, clientType: 'not_found_error' },
  function_failed: server,
  function_timeout: { ...server, retryable: true, httpStatus: 504 },
  work_not_found: { ...input, httpStatus: 404 },
  invalid_arguments: input,
  /** A request body, source or argument list over its size limit. */
  payload_too_large: { ...input, httpStatus: 413 },
  /** A resource of the HTTP APIs (a secret, a key) that does not exist. */
  not_found: { retryable: false, httpStatus: 404, clientType: 'not_found_error' },
  rate_limited: { retryable: true, httpStatus: 429, clientType: 'rate_limit_error' },
  unauthorized: { retryable: false, httpStatus: 401, clientType: 'authentication_error' },
  /** Authenticated, but the credential may not do this (a missing scope, another tenant's resource). */
  forbidden: { retryable: false, httpStatus: 403, clientType: 'permission_error' },
  /** A process setting (environment variable) is missing or malformed; the process does not start. */
  invalid_settings: server,
  /** A call the SIP bridge placed was not answered (busy, declined, not found, no answer); `sipStatus` says which. */
  call_failed: { retryable: true, httpStatus: 409, clientType: 'invalid_request_error' },
  /** A REFER transfer was refused or did not reach the target; the call stays with the assistant. */
  transfer_failed: { retryable: true, httpStatus: 409, clientType: 'invalid_request_error' },
  internal_error: server,
} as const satisfies Record<string, ErrorCodeInfo>;

export type ErrorCode = keyof typeof ERROR_TABLE;

/** Every code, as a tuple for `z.enum`. */
export const ERROR_CODES = Object.keys(ERROR_TABLE) as [ErrorCode, ...ErrorCode[]];

/** What the table says about `code`. */
export function errorCodeInfo(code: ErrorCode): ErrorCodeInfo {
  return ERROR_TABLE[code];
}

/** Whether `value` is one of the table's codes (for codes read off the wire). */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_TABLE, value);
}

/**
 * One base error for the whole runtime: a stable `code` that clients and logs can match on,
 * whether a retry can help, and the underlying cause. The table's HTTP statuses are read only by the edge.
 *
 * @example
 *   throw new VenusError('audio_too_large', 'input_audio_buffer.append carries 2.1 MB; the limit is 1 MB');
 */
export class VenusError extends Error {
  override readonly name = 'VenusError';
  readonly code: ErrorCode;
  readonly retryable: boolean;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; retryable?: boolean }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = options?.retryable ?? ERROR_TABLE[code].retryable;
  }

  static isInstance(value: unknown): value is VenusError {
    return value instanceof Error && (value as { name?: string }).name === 'VenusError' && 'code' in value;
  }
}

/** Turns anything thrown into a VenusError, keeping the original as `cause`. */
export function toVenusError(value: unknown, fallback: ErrorCode = 'internal_error'): VenusError {
  if (VenusError.isInstance(value)) return value;
  const message = value instanceof Error ? value.message : String(value);
  return new VenusError(fallback, message, { cause: value });
}
