/**
 * One base error for the whole runtime: a stable `code` that clients and logs can match on,
 * whether a retry can help, and the underlying cause. HTTP statuses exist only at the edge.
 *
 * @example
 *   throw new VenusError('audio_too_large', 'input_audio_buffer.append carries 2.1 MB; the limit is 1 MB');
 */
export const ERROR_CODES = [
  'invalid_json',
  'invalid_event',
  'unknown_event_type',
  'audio_too_large',
  'audio_wrong_format',
  'wrong_session',
  'unsupported_feature',
  'session_closed',
  'delegate_parse_error',
  'delegate_query_too_long',
  'delegate_limit_reached',
  'result_too_long',
  'timeline_seq_conflict',
  'stale_incarnation',
  'model_step_failed',
  'model_unavailable',
  'function_not_found',
  'function_failed',
  'function_timeout',
  'work_not_found',
  'invalid_arguments',
  'rate_limited',
  'unauthorized',
  /** Authenticated, but the credential may not do this (a missing scope, another tenant's resource). */
  'forbidden',
  'internal_error',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

const RETRYABLE: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'model_unavailable',
  'model_step_failed',
  'rate_limited',
  'function_timeout',
]);

export class VenusError extends Error {
  override readonly name = 'VenusError';
  readonly code: ErrorCode;
  readonly retryable: boolean;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; retryable?: boolean }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = options?.retryable ?? RETRYABLE.has(code);
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
