import { type ErrorCode, VenusError } from '@venus/protocol';
import type { z } from 'zod';
import { ErrorBodySchema } from './wire-schemas.ts';

export interface ServiceClientOptions {
  baseUrl: string;
  fetch?: typeof fetch;
  /** Extra attempts after a 5xx answer or a failed connection. */
  retries: number;
  requestTimeoutMs: number;
  /** First backoff; each retry doubles it. */
  retryBaseMs: number;
}

/** A non-2xx answer, kept raw so callers can treat some statuses (408 on output) as results. */
export interface ServiceFailure {
  status: number;
  /** The service's exception class name (`IncarnationMismatch`, `SessionBusy`, ...), when the body had one. */
  type: string | null;
  message: string;
}

export type ServiceReply<T> = { ok: true; value: T } | { ok: false; failure: ServiceFailure };

export interface ServiceRequest<S extends z.ZodType> {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  query?: Record<string, string | number>;
  body?: unknown;
  schema: S;
  /** What a malformed 2xx body becomes. */
  malformedCode?: ErrorCode;
  /** Extra time for a long-poll on top of the request timeout. */
  extraTimeoutMs?: number;
}

/**
 * HTTP transport to one model service: JSON in and out, bounded retries with exponential backoff
 * for 5xx answers and connection failures, and zod validation of every 2xx body. Failures stay
 * data (`ServiceReply`) until a caller decides what they mean; `failureToError` holds the default
 * mapping from the service's error types to stable runtime codes.
 *
 * @example
 *   const client = new ServiceClient({ baseUrl: 'http://gpu-1:8031', retries: 2, requestTimeoutMs: 10_000, retryBaseMs: 100 });
 *   const health = await client.call({ method: 'GET', path: '/healthz', schema: HealthSchema });
 */
export class ServiceClient {
  private readonly opts: ServiceClientOptions;
  private readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;

  constructor(opts: ServiceClientOptions) {
    this.opts = opts;
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.fetchImpl = opts.fetch ?? globalThis.fetch;
  }

  /** Sends, retrying transient failures; a remaining failure is returned, not thrown. */
  async send<S extends z.ZodType>(req: ServiceRequest<S>): Promise<ServiceReply<z.infer<S>>> {
    let last: ServiceFailure | null = null;
    for (let attempt = 0; attempt <= this.opts.retries; attempt++) {
      if (attempt > 0) await sleep(this.opts.retryBaseMs * 2 ** (attempt - 1));
      const result = await this.once(req);
      if (result.ok) return result;
      last = result.failure;
      if (!isTransient(last)) break;
    }
    return { ok: false, failure: last as ServiceFailure };
  }

  /** Sends and throws the default VenusError for any failure. */
  async call<S extends z.ZodType>(req: ServiceRequest<S>): Promise<z.infer<S>> {
    const reply = await this.send(req);
    if (reply.ok) return reply.value;
    throw failureToError(reply.failure, `${req.method} ${req.path}`);
  }

  private async once<S extends z.ZodType>(req: ServiceRequest<S>): Promise<ServiceReply<z.infer<S>>> {
    const url = new URL(this.baseUrl + req.path);
    for (const [k, v] of Object.entries(req.query ?? {})) url.searchParams.set(k, String(v));
    let response: Response;
    let text: string;
    try {
      response = await this.fetchImpl(url, {
        method: req.method,
        headers: req.body === undefined ? {} : { 'content-type': 'application/json' },
        body: req.body === undefined ? undefined : JSON.stringify(req.body),
        signal: AbortSignal.timeout(this.opts.requestTimeoutMs + (req.extraTimeoutMs ?? 0)),
      });
      text = await response.text();
    } catch (err) {
      // Status 0: no answer at all (refused, reset, timed out); always worth another try.
      return { ok: false, failure: { status: 0, type: null, message: describeFetchError(err) } };
    }
    if (!response.ok) return { ok: false, failure: parseFailure(response.status, text) };
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new VenusError(req.malformedCode ?? 'model_unavailable', `${req.method} ${req.path}: body is not JSON`);
    }
    const parsed = req.schema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue && issue.path.length > 0 ? issue.path.join('.') : '(root)';
      throw new VenusError(
        req.malformedCode ?? 'model_unavailable',
        `malformed answer to ${req.method} ${req.path}: field ${field}: ${issue?.message ?? 'invalid'}`,
        { cause: parsed.error, retryable: false },
      );
    }
    return { ok: true, value: parsed.data };
  }
}

function parseFailure(status: number, text: string): ServiceFailure {
  try {
    const body = ErrorBodySchema.safeParse(JSON.parse(text));
    if (body.success) return { status, type: body.data.type, message: body.data.error };
  } catch {
    // Not JSON: a proxy page or the framework's plain "Internal Server Error".
  }
  return { status, type: null, message: text.slice(0, 300) || `HTTP ${status}` };
}

function isTransient(f: ServiceFailure): boolean {
  return f.status === 0 || f.status >= 500;
}

function describeFetchError(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    const detail = cause instanceof Error ? `: ${cause.message}` : '';
    return `${err.name === 'TimeoutError' ? 'request timed out' : err.message}${detail}`;
  }
  return String(err);
}

/**
 * The service's error classes (`demos/model/adapter.py`) mapped to runtime codes:
 * an older incarnation is fenced out; a closed or replaced session is gone; a full service or a
 * busy session is worth retrying later; anything else the caller sent wrong is its own fault.
 */
export function failureToError(f: ServiceFailure, what: string): VenusError {
  const message = `model service ${what}: ${f.status === 0 ? 'no answer' : `HTTP ${f.status}`}${f.type ? ` ${f.type}` : ''}: ${f.message}`;
  const cause = { ...f };
  if (f.type === 'IncarnationMismatch') return new VenusError('stale_incarnation', message, { cause });
  if (f.type === 'SessionClosedError' || f.status === 410) return new VenusError('session_closed', message, { cause });
  if (f.type === 'UnknownSession' || f.status === 404) return new VenusError('session_closed', message, { cause });
  if (f.type === 'SessionBusy' || f.status === 409 || f.status === 429)
    return new VenusError('model_unavailable', message, { cause, retryable: true });
  if (f.type === 'Unsupported') return new VenusError('unsupported_feature', message, { cause });
  if (f.status === 0 || f.status >= 500 || f.status === 408)
    return new VenusError('model_unavailable', message, { cause, retryable: true });
  return new VenusError('invalid_arguments', message, { cause });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
