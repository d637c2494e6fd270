import { FUNCTIONS_LIMITS, type FunctionReplySchema, type InvocationError } from '@venus/protocol';
import type { z } from 'zod';
import { abortableSleep } from '../../abortable.ts';
import { parseReply } from '../function-reply.ts';
import { egressFetch, egressRefusal } from './egress-guard.ts';
import { SIGNATURE_HEADER, signVenusRequest, TIMESTAMP_HEADER } from './request-signature.ts';

export interface HttpInvokerOptions {
  /** Injected for tests and for runtimes with their own fetch (no egress check is added to it). */
  fetch?: typeof fetch;
  /**
   * Call endpoints on private, loopback and link-local addresses too (default false: tenants'
   * functions must not reach the harness's own network, e.g. a cloud metadata service or Redis).
   */
  allowPrivateNetworks?: boolean;
  /** First retry waits about this long, doubling each time (default 200 ms). */
  backoffBaseMs?: number;
  /** No single wait is longer (default 5 s); also caps a server's Retry-After. */
  backoffMaxMs?: number;
  random?: () => number;
}

export interface HttpInvokeRequest {
  url: string;
  /** Signs the request when given. */
  secret?: string;
  timeoutMs: number;
  retries: number;
  invocationId: string;
  /** What the endpoint receives as JSON. */
  payload: { args: unknown; workId: string; session: string; function: string; version: number };
  signal?: AbortSignal;
}

export type HttpInvokeOutcome =
  | { ok: true; reply: z.infer<typeof FunctionReplySchema>; logs: string[] }
  | { ok: false; error: InvocationError; logs: string[] };

type Attempt =
  | { kind: 'reply'; reply: z.infer<typeof FunctionReplySchema> }
  | { kind: 'final'; error: InvocationError }
  | { kind: 'retry'; error: InvocationError; retryAfterMs?: number };

/**
 * Calls an HTTP function: POSTs `{args, workId, session, function, version}` as JSON, signed with
 * `x-venus-timestamp` and `x-venus-signature: sha256=<HMAC of "timestamp.body">`. Retries with
 * exponential backoff and jitter on 5xx, 429, timeouts and network errors, never on other 4xx;
 * every attempt is signed afresh. A 2xx reply must be JSON `{speech?, data?}` (or a bare string).
 *
 * @example
 *   const invoker = new HttpFunctionInvoker();
 *   const outcome = await invoker.invoke({ url: 'https://fn.example.com/hook', secret, timeoutMs: 5000, retries: 2,
 *     invocationId: 'inv_1', payload: { args: { city: 'Paris' }, workId: 'w1', session: 's1', function: 'lookup', version: 1 } });
 */
export class HttpFunctionInvoker {
  readonly #fetch: typeof fetch;
  readonly #backoffBaseMs: number;
  readonly #backoffMaxMs: number;
  readonly #random: () => number;

  constructor(options: HttpInvokerOptions = {}) {
    this.#fetch = options.fetch ?? egressFetch(options);
    this.#backoffBaseMs = options.backoffBaseMs ?? 200;
    this.#backoffMaxMs = options.backoffMaxMs ?? 5000;
    this.#random = options.random ?? Math.random;
  }

  async invoke(request: HttpInvokeRequest): Promise<HttpInvokeOutcome> {
    const logs: string[] = [];
    const body = JSON.stringify(request.payload);
    const signal = request.signal ?? new AbortController().signal;
    let last: InvocationError = { code: 'network_error', message: 'no attempt was made' };
    for (let attempt = 1; attempt <= request.retries + 1; attempt++) {
      if (signal.aborted) return { ok: false, error: cancelled(), logs };
      const result = await this.#attempt(request, body, attempt, signal);
      if (result.kind === 'reply') {
        logs.push(`attempt ${attempt}: ok`);
        return { ok: true, reply: result.reply, logs };
      }
      last = result.error;
      if (result.kind === 'final' || attempt > request.retries) {
        logs.push(`attempt ${attempt}: ${result.error.message}`);
        break;
      }
      const exponential = Math.min(this.#backoffMaxMs, this.#backoffBaseMs * 2 ** (attempt - 1));
      const waitMs = Math.round(
        Math.min(this.#backoffMaxMs, result.retryAfterMs ?? exponential * (0.5 + this.#random() * 0.5)),
      );
      logs.push(`attempt ${attempt}: ${result.error.message}; retrying in ${waitMs} ms`);
      try {
        await abortableSleep(waitMs, signal);
      } catch {
        return { ok: false, error: cancelled(), logs };
      }
    }
    return { ok: false, error: last, logs };
  }

  async #attempt(request: HttpInvokeRequest, body: string, attempt: number, outer: AbortSignal): Promise<Attempt> {
    const timestamp = String(Math.floor(Date.now() / 1000));
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json',
      [TIMESTAMP_HEADER]: timestamp,
      'x-venus-invocation': request.invocationId,
      'x-venus-attempt': String(attempt),
    };
    if (request.secret !== undefined) headers[SIGNATURE_HEADER] = signVenusRequest(request.secret, timestamp, body);
    const timeout = AbortSignal.timeout(request.timeoutMs);
    let response: Response;
    try {
      response = await this.#fetch(request.url, {
        method: 'POST',
        headers,
        body,
        redirect: 'error',
        signal: AbortSignal.any([outer, timeout]),
      });
    } catch (error) {
      if (outer.aborted) return { kind: 'final', error: cancelled() };
      if (timeout.aborted) {
        return { kind: 'retry', error: { code: 'http_timeout', message: `no answer within ${request.timeoutMs} ms` } };
      }
      const refused = egressRefusal(error);
      if (refused !== undefined) {
        const message = `${refused.message}: HTTP functions must be on public addresses (the operator can allow private networks)`;
        return { kind: 'final', error: { code: 'egress_refused', message } };
      }
      const detail =
        error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
      return { kind: 'retry', error: { code: 'network_error', message: `could not reach the endpoint: ${detail}` } };
    }
    let text: string;
    try {
      text = await readCapped(response, FUNCTIONS_LIMITS.maxOutputBytes);
    } catch (error) {
      if (outer.aborted) return { kind: 'final', error: cancelled() };
      if (timeout.aborted) {
        return {
          kind: 'retry',
          error: { code: 'http_timeout', message: `no full answer within ${request.timeoutMs} ms` },
        };
      }
      return { kind: 'final', error: { code: 'invalid_output', message: (error as Error).message } };
    }
    if (response.status >= 500 || response.status === 429) {
      const retryAfter = Number(response.headers.get('retry-after'));
      return {
        kind: 'retry',
        error: { code: 'http_error', message: `HTTP ${response.status}${snippet(text)}` },
        ...(Number.isFinite(retryAfter) && retryAfter >= 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
      };
    }
    if (response.status < 200 || response.status >= 300) {
      return { kind: 'final', error: { code: 'http_error', message: `HTTP ${response.status}${snippet(text)}` } };
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return {
        kind: 'final',
        error: { code: 'invalid_output', message: 'the endpoint answered with something that is not JSON' },
      };
    }
    const reply = parseReply(json, { strict: true });
    return reply.ok ? { kind: 'reply', reply: reply.reply } : { kind: 'final', error: reply.error };
  }
}

function cancelled(): InvocationError {
  return { code: 'cancelled', message: 'the invocation was cancelled' };
}

function snippet(text: string): string {
  const trimmed = text.trim().slice(0, 200);
  return trimmed === '' ? '' : `: ${trimmed}`;
}

async function readCapped(response: Response, maxBytes: number): Promise<string> {
  const reader = response.body?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw new Error(`the answer is larger than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
