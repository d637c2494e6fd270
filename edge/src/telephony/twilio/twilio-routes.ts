import { DeliveryPolicySchema } from '@venus/protocol';
import type { Hono } from 'hono';
import type { UpgradeWebSocket } from 'hono/ws';
import { z } from 'zod';
import type { EdgeEnv } from '../../app.ts';
import type { EdgeAuth } from '../../auth/edge-auth.ts';
import { httpError } from '../../auth/http-error.ts';
import { hasScope } from '../../auth/principal.ts';
import { type EdgeCallDeps, openEdgeCall } from './edge-calls.ts';
import { TWILIO_SIGNATURE_HEADER, twilioSignatureValid } from './twilio-signature.ts';
import { TOKEN_PARAMETER, TwilioStream } from './twilio-stream.ts';

/** The Media Streams WebSocket. Twilio opens it with no credential: the token in `start` is checked instead. */
export const TWILIO_STREAM_PATH = '/v1/telephony/twilio';
export const TWILIO_TWIML_PATH = '/v1/telephony/twilio/twiml';

/** How long the token the TwiML carries stays good: it is checked once, at `start`, seconds after it is minted. */
const TOKEN_TTL_S = 300;

/** The assistant of the calls the webhook answers, from its query string (set in the number's webhook URL). */
const TwimlQuerySchema = z.object({
  instructions: z.string().max(2000).optional(),
  voice: z.string().min(1).max(64).optional(),
  delivery_policy: DeliveryPolicySchema.optional(),
});

/**
 * `POST /v1/telephony/twilio/twiml`, the voice webhook of a Twilio number: authenticated with an
 * API key holding the `realtime` scope (`?api_key=` in the webhook URL, or Bearer), it answers
 * `<Response><Connect><Stream url="wss://…/v1/telephony/twilio">` with a `<Parameter>` carrying a
 * client token (HMAC-signed, 5 minutes) for the key's tenant and the assistant named by the query
 * (`instructions`, `voice`, `delivery_policy`). `streamUrl` overrides the URL derived from the
 * request (`X-Forwarded-Proto`/`X-Forwarded-Host` are honoured behind a proxy). With the Twilio
 * account's auth token configured (`auth.twilioAuthToken`) the request must also carry a valid
 * `X-Twilio-Signature` over the URL Twilio called and its form parameters, else 403
 * `forbidden` naming `X-Twilio-Signature`: a leaked webhook URL (its `api_key`) alone mints no tokens.
 */
export function mountTwilioTwiml(app: Hono<EdgeEnv>, auth: EdgeAuth, options: { streamUrl?: string } = {}): void {
  app.post(TWILIO_TWIML_PATH, async (c) => {
    const principal = c.get('principal');
    if (principal.kind === 'client_token') return httpError(c, 403, 'forbidden', 'a client token cannot mint tokens');
    if (!hasScope(principal, 'realtime')) return httpError(c, 403, 'forbidden', "this key lacks the 'realtime' scope");
    if (auth.twilioAuthToken !== undefined) {
      const form = await c.req.parseBody().catch(() => undefined);
      const params: Record<string, string> = {};
      for (const [name, value] of Object.entries(form ?? {})) if (typeof value === 'string') params[name] = value;
      const url = publicUrlOf(c.req.url, c.req.header('x-forwarded-proto'), c.req.header('x-forwarded-host'));
      if (
        form === undefined ||
        !twilioSignatureValid(auth.twilioAuthToken, c.req.header(TWILIO_SIGNATURE_HEADER), url, params)
      ) {
        return httpError(
          c,
          403,
          'forbidden',
          `X-Twilio-Signature is missing or does not sign ${url} and its form parameters (check the webhook URL and the auth token)`,
          { param: 'X-Twilio-Signature' },
        );
      }
    }
    const query = TwimlQuerySchema.safeParse(c.req.query());
    if (!query.success) {
      const issue = query.error.issues[0];
      const param = String(issue?.path[0] ?? 'query');
      return httpError(c, 400, 'invalid_arguments', `${param}: ${issue?.message}`, { param });
    }
    const { instructions, voice, delivery_policy } = query.data;
    const session = {
      ...(instructions === undefined ? {} : { instructions }),
      ...(voice === undefined ? {} : { voice }),
      ...(delivery_policy === undefined ? {} : { venus: { delivery_policy } }),
    };
    const { value } = await auth.tokens.mint({
      tenant: principal.tenant,
      keyId: principal.keyId,
      scopes: ['realtime'],
      expiresAt: Math.floor(auth.now() / 1000) + TOKEN_TTL_S,
      ...(Object.keys(session).length === 0 ? {} : { session }),
    });
    const url =
      options.streamUrl ?? streamUrlOf(c.req.url, c.req.header('x-forwarded-proto'), c.req.header('x-forwarded-host'));
    const twiml =
      '<?xml version="1.0" encoding="UTF-8"?>' +
      `<Response><Connect><Stream url="${xml(url)}">` +
      `<Parameter name="${TOKEN_PARAMETER}" value="${xml(value)}"/>` +
      '</Stream></Connect></Response>';
    return c.body(twiml, 200, { 'content-type': 'text/xml; charset=utf-8' });
  });
}

/** The stream WebSocket on a runtime adapter that can upgrade (Node). */
export function mountTwilioStream(app: Hono<EdgeEnv>, upgradeWebSocket: UpgradeWebSocket, deps: EdgeCallDeps): void {
  app.get(
    TWILIO_STREAM_PATH,
    upgradeWebSocket(() => {
      let stream: TwilioStream | undefined;
      return {
        onOpen(_event, ws) {
          stream = new TwilioStream({
            send: (text) => ws.send(text),
            close: (code, reason) => ws.close(code, reason),
            authenticate: async (token) => {
              const verified = await deps.auth.authenticate(token);
              return verified.ok ? verified : { ok: false, message: verified.message };
            },
            openCall: (media, principal) => openEdgeCall(deps, media, principal, 'pcmu'),
          });
        },
        onMessage: (event) => stream?.handleMessage(event.data),
        onClose: () => stream?.handleClose(),
        onError: () => stream?.handleClose(),
      };
    }),
  );
  app.get(TWILIO_STREAM_PATH, (c) => c.text('Upgrade Required: Twilio Media Streams connect with a WebSocket', 426));
}

function streamUrlOf(requestUrl: string, proto: string | undefined, host: string | undefined): string {
  const url = new URL(requestUrl);
  const secure = (proto ?? url.protocol.replace(':', '')) === 'https';
  return `${secure ? 'wss' : 'ws'}://${host ?? url.host}${TWILIO_STREAM_PATH}`;
}

/** The URL the caller used, path and query included, behind a proxy that names its scheme and host. */
function publicUrlOf(requestUrl: string, proto: string | undefined, host: string | undefined): string {
  const url = new URL(requestUrl);
  const scheme = proto?.split(',')[0]?.trim() || url.protocol.replace(':', '');
  return `${scheme}://${host?.split(',')[0]?.trim() || url.host}${url.pathname}${url.search}`;
}

function xml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}
