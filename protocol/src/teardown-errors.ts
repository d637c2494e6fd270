/**
 * Which errors are the ordinary noise of something closing: a peer that hung up (ECONNRESET,
 * EPIPE), a write to a socket that is already closed, an abort we asked for, a Redis client that
 * was quit while a command was in flight. They are expected whenever a session, a socket or a
 * process ends, so call sites log them at debug and everything else at warn or above. Keeping the
 * list in one tested place (partykit's `transport-errors.ts` is the model) stops each catch from
 * growing its own regex, or swallowing everything.
 *
 * @example
 *   socket.on('error', (err) => logUnlessTeardown(log, err, 'client socket failed'));
 *   await redis.quit().catch((err) => logUnlessTeardown(log, err, 'redis quit failed'));
 */
import type { Logger } from './logger.ts';

/** Node and undici error codes a closing peer or socket produces. */
const TEARDOWN_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ECONNABORTED',
  'ERR_STREAM_DESTROYED',
  'ERR_STREAM_PREMATURE_CLOSE',
  'ERR_STREAM_WRITE_AFTER_END',
  'ERR_SOCKET_CLOSED',
  'ERR_SOCKET_CLOSED_BEFORE_CONNECTION',
  'UND_ERR_SOCKET',
  'UND_ERR_ABORTED',
  'ABORT_ERR',
  /** VenusError: the session ended while this was in flight. */
  'session_closed',
]);

/** Messages without a code: ws, ioredis/BullMQ, and the WHATWG WebSocket on Workers. */
const TEARDOWN_MESSAGES: readonly RegExp[] = [
  /WebSocket is not open/i,
  /WebSocket was closed before the connection was established/i,
  /^Connection is closed\.?$/,
  /\bsocket hang up\b/i,
  /\bsocket (has been |is )?closed\b/i,
  /\bThe client is closed\b/,
];

const MAX_CAUSES = 4;

/** True when `error` (or one of its causes) is the expected result of a close, not a defect. */
export function isBenignTeardownError(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth <= MAX_CAUSES && current !== undefined && current !== null; depth++) {
    if (isTeardownItself(current)) return true;
    current = typeof current === 'object' ? (current as { cause?: unknown }).cause : undefined;
  }
  return false;
}

function isTeardownItself(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { name, code, message } = error as { name?: unknown; code?: unknown; message?: unknown };
  if (name === 'AbortError') return true;
  if (typeof code === 'string' && TEARDOWN_CODES.has(code)) return true;
  return typeof message === 'string' && TEARDOWN_MESSAGES.some((pattern) => pattern.test(message));
}

/**
 * Logs `error` at debug when it is teardown noise and at `level` (warn by default) otherwise.
 * For catch sites that must not throw (close paths, fire-and-forget sends) but must not hide a defect.
 */
export function logUnlessTeardown(
  log: Logger,
  error: unknown,
  message: string,
  options: { level?: 'warn' | 'error'; fields?: Record<string, unknown> } = {},
): void {
  const fields = { ...options.fields, err: error };
  if (isBenignTeardownError(error)) log.debug(fields, message);
  else log[options.level ?? 'warn'](fields, message);
}
