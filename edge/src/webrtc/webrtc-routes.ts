import { errorCodeInfo, toVenusError } from '@venus/protocol';
import type { Context, Hono } from 'hono';
import { type EdgeApp, type EdgeEnv, REALTIME_PATH } from '../app.ts';
import { httpError } from '../auth/http-error.ts';
import { hasScope, mayActOn } from '../auth/principal.ts';
import { limitBody } from '../http/body-limit.ts';
import { reserveSessionSlot } from '../tenancy/tenancy.ts';
import { OpusCodec } from './opus-codec.ts';
import { MAX_OFFER_REQUEST_BYTES, readOfferRequest } from './sdp-offer-request.ts';
import { WebRtcSession, type WebRtcSessionOptions } from './webrtc-session.ts';

/** OpenAI's WebRTC call endpoint: POST an SDP offer, get the answer and the call's URL. */
export const CALLS_PATH = `${REALTIME_PATH}/calls`;

export type WebRtcRoutesOptions = Omit<WebRtcSessionOptions, 'onClosed'>;

/** The live WebRTC calls of one edge. */
export interface WebRtcCalls {
  readonly size: number;
  get(sessionId: string): WebRtcSession | undefined;
  /** Ends every call (server shutdown). */
  close(): void;
}

interface Call {
  session: WebRtcSession;
  tenant: string;
}

/**
 * Mounts the WebRTC signalling routes of OpenAI's Realtime API on a Node edge:
 * `POST /v1/realtime/calls` (GA: `application/sdp`, or multipart `sdp` + `session`) answers
 * 201 with the SDP answer and `Location: /v1/realtime/calls/{session id}`; the older
 * `POST /v1/realtime?model=…` with an SDP body does the same; `POST /v1/realtime/calls/{id}/hangup`
 * ends a call. Calls pass the same authentication, scope and session quota as the WebSocket.
 *
 * @example
 *   const edge = createEdgeApp({ link });
 *   const calls = mountWebRtcRoutes(edge.app, edge, { iceAddress: '127.0.0.1' });
 *   // on shutdown: calls.close();
 */
export function mountWebRtcRoutes(app: Hono<EdgeEnv>, edge: EdgeApp, options: WebRtcRoutesOptions = {}): WebRtcCalls {
  const calls = new Map<string, Call>();
  OpusCodec.preload();

  const createCall = async (c: Context<EdgeEnv>): Promise<Response> => {
    const principal = c.get('principal');
    if (!hasScope(principal, 'realtime')) {
      return httpError(c, 403, 'forbidden', "this credential lacks the 'realtime' scope");
    }
    const offer = await readOfferRequest(c.req.raw);
    if (!offer.ok) {
      return httpError(
        c,
        offer.status,
        offer.code,
        offer.message,
        offer.param === undefined ? {} : { param: offer.param },
      );
    }
    const reserved = await reserveSessionSlot(edge.tenancy, principal.tenant);
    if (!reserved.ok) {
      return httpError(c, 429, 'rate_limited', reserved.message, { retryAfterMs: reserved.retryAfterMs });
    }
    let sessionId: string | undefined;
    const session = new WebRtcSession({
      ...options,
      onClosed: () => {
        if (sessionId !== undefined) calls.delete(sessionId);
      },
    });
    let answer: string;
    try {
      answer = await session.answer(offer.sdp);
    } catch (cause) {
      session.close('offer refused');
      const error = toVenusError(cause);
      return httpError(c, errorCodeInfo(error.code).httpStatus, error.code, error.message);
    }
    // Token settings (minted by the app's server) win over what the browser asks for.
    const settings = offer.session === undefined ? principal.session : { ...offer.session, ...principal.session };
    const connection = edge.openRealtime(session.transport, principal.tenant, {
      principal: settings === undefined ? principal : { ...principal, session: settings },
      ticket: reserved.ticket,
    });
    session.attach(connection);
    if (session.closed) {
      return httpError(c, 429, 'rate_limited', session.closeReason ?? 'the session was refused');
    }
    sessionId = connection.sessionId;
    calls.set(sessionId, { session, tenant: principal.tenant });
    c.header('Location', `${CALLS_PATH}/${sessionId}`);
    c.header('Content-Type', 'application/sdp');
    return c.body(answer, 201);
  };

  const offerLimit = limitBody(MAX_OFFER_REQUEST_BYTES);
  app.post(CALLS_PATH, offerLimit, createCall);
  app.post(REALTIME_PATH, offerLimit, createCall);
  app.post(`${CALLS_PATH}/:id/hangup`, (c) => {
    const id = c.req.param('id');
    const call = calls.get(id);
    if (call === undefined) return httpError(c, 404, 'wrong_session', `no live call ${id}`);
    if (!mayActOn(c.get('principal'), call.tenant)) {
      return httpError(c, 404, 'wrong_session', `no live call ${id}`);
    }
    call.session.close('hung up');
    return c.body(null, 200);
  });

  return {
    get size() {
      return calls.size;
    },
    get: (sessionId) => calls.get(sessionId)?.session,
    close() {
      for (const call of [...calls.values()]) call.session.close('server shutting down');
    },
  };
}
