import { type ErrorCode, SessionUpdateSchema } from '@venus/protocol';
import { z } from 'zod';
import type { SessionSettings } from '../auth/principal.ts';
import { removeAudioFormats } from './session-update-filter.ts';

/** Offers are a few kB; anything near this is not one. */
export const MAX_OFFER_BYTES = 64 * 1024;
/** A whole call request (an offer and its session JSON, multipart framing around them). */
export const MAX_OFFER_REQUEST_BYTES = MAX_OFFER_BYTES * 2;

const SdpSchema = z
  .string()
  .max(MAX_OFFER_BYTES, `an SDP offer is at most ${MAX_OFFER_BYTES} bytes`)
  .refine((sdp) => sdp.trimStart().startsWith('v=0'), 'not an SDP offer (it must start with v=0)');

const SessionFieldSchema = z
  .string()
  .max(MAX_OFFER_BYTES)
  .transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'session is not JSON' });
      return z.NEVER;
    }
  })
  .pipe(SessionUpdateSchema.shape.session);

export type OfferRequest =
  | { ok: true; sdp: string; session?: SessionSettings }
  | { ok: false; status: 400 | 415; code: ErrorCode; message: string; param?: string };

/**
 * Reads a call request the two ways OpenAI's WebRTC flow sends one: the offer alone as
 * `application/sdp`, or `multipart/form-data` with an `sdp` field and a `session` field holding the
 * session configuration as JSON (applied before `session.created`, less the audio formats, which
 * the media track fixes). The body must already be limited to MAX_OFFER_REQUEST_BYTES as it streams
 * in (the routes' `limitBody`): this reads it whole.
 *
 * @example
 *   const offer = await readOfferRequest(c.req.raw);
 *   if (!offer.ok) return httpError(c, offer.status, offer.code, offer.message);
 */
export async function readOfferRequest(request: Request): Promise<OfferRequest> {
  const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/sdp') return checkSdp(await request.text(), 'body');
  if (type === 'multipart/form-data') {
    let form: FormData;
    try {
      form = await request.formData();
    } catch {
      return { ok: false, status: 400, code: 'invalid_arguments', message: 'malformed multipart body' };
    }
    const sdpField = form.get('sdp');
    const offer = checkSdp(typeof sdpField === 'string' ? sdpField : '', 'sdp');
    if (!offer.ok) return offer;
    const sessionField = form.get('session');
    if (sessionField === null) return offer;
    const session = SessionFieldSchema.safeParse(typeof sessionField === 'string' ? sessionField : '');
    if (!session.success) {
      const issue = session.error.issues[0];
      const where = issue?.path.length ? `.${issue.path.join('.')}` : '';
      return {
        ok: false,
        status: 400,
        code: 'invalid_arguments',
        message: `session${where}: ${issue?.message ?? 'invalid'}`,
        param: 'session',
      };
    }
    removeAudioFormats(session.data);
    return { ...offer, session: session.data };
  }
  return {
    ok: false,
    status: 415,
    code: 'invalid_arguments',
    message: 'send the SDP offer as application/sdp, or as multipart/form-data with sdp and session fields',
  };
}

function checkSdp(text: string, param: string): OfferRequest {
  const parsed = SdpSchema.safeParse(text);
  if (parsed.success) return { ok: true, sdp: parsed.data };
  return {
    ok: false,
    status: 400,
    code: 'invalid_arguments',
    message: parsed.error.issues[0]?.message ?? 'invalid SDP',
    param,
  };
}
