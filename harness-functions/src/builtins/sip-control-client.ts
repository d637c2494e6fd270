import { isErrorCode, VenusError } from '@venus/protocol';
import { z } from 'zod';

export interface SipControlOptions {
  /** The SIP bridge's control API, e.g. http://127.0.0.1:5090 (VENUS_SIP_CONTROL_URL). */
  url: string;
  /** Its bearer token (VENUS_SIP_CONTROL_TOKEN). */
  token: string;
  fetch?: typeof fetch;
}

const PlacedSchema = z.object({ session: z.string(), callId: z.string() });
const TransferredSchema = z.object({ session: z.string(), transferred: z.literal(true) });
const ErrorBodySchema = z.object({
  error: z.object({ code: z.string(), message: z.string(), sipStatus: z.number().int().optional() }),
});

/**
 * The harness's side of the SIP bridge's control API (sip-bridge/src/control/control-api.ts):
 * responses read with zod, the bridge's coded errors raised again as VenusErrors with the same
 * code (`call_failed`, `transfer_failed`, `forbidden`...) and the SIP status in the message.
 * Cancelling `signal` aborts the request, which makes the bridge CANCEL a call still ringing.
 */
export class SipControlClient {
  readonly #options: SipControlOptions;

  constructor(options: SipControlOptions) {
    this.#options = options;
  }

  placeCall(to: string, signal: AbortSignal): Promise<z.infer<typeof PlacedSchema>> {
    return this.#post('/v1/calls', { to }, PlacedSchema, signal);
  }

  transfer(session: string, to: string | undefined, signal: AbortSignal): Promise<z.infer<typeof TransferredSchema>> {
    return this.#post(
      `/v1/calls/${encodeURIComponent(session)}/transfer`,
      to === undefined ? {} : { to },
      TransferredSchema,
      signal,
    );
  }

  async #post<S extends z.ZodType>(path: string, body: unknown, schema: S, signal: AbortSignal): Promise<z.infer<S>> {
    const fetchImpl = this.#options.fetch ?? globalThis.fetch;
    let response: Response;
    try {
      response = await fetchImpl(new URL(path, this.#options.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${this.#options.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal,
      });
    } catch (error) {
      if (signal.aborted) throw error;
      throw new VenusError('function_failed', `the SIP bridge is not reachable: ${(error as Error).message}`, {
        cause: error,
        retryable: true,
      });
    }
    const json: unknown = await response.json().catch(() => undefined);
    if (response.ok) {
      const parsed = schema.safeParse(json);
      if (parsed.success) return parsed.data;
      throw new VenusError('function_failed', 'the SIP bridge answered something unexpected');
    }
    const failure = ErrorBodySchema.safeParse(json);
    if (!failure.success) throw new VenusError('function_failed', `the SIP bridge answered HTTP ${response.status}`);
    const { code, message, sipStatus } = failure.data.error;
    const detail = sipStatus === undefined ? message : `${message} (SIP ${sipStatus})`;
    throw new VenusError(isErrorCode(code) ? code : 'function_failed', detail);
  }
}
