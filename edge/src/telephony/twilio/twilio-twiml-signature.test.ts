import { describe, expect, it } from 'vitest';
import { createEdgeApp } from '../../app.ts';
import { EdgeAuth } from '../../auth/edge-auth.ts';
import { FakeWorkerLink } from '../../testing/fake-worker-link.ts';
import { TWILIO_TWIML_PATH } from './twilio-routes.ts';
import { twilioSignature } from './twilio-signature.ts';

const KEY = 'sk-twilio-test-key';
const TWILIO_TOKEN = 'twilio-account-auth-token';
const FORM = { CallSid: 'CA0001', From: '+15550001', To: '+15550002', AccountSid: 'AC0001' };

/** The edge's core on a FAKE worker link (no session is opened by the webhook), Twilio signing on. */
function edge() {
  const auth = new EdgeAuth({ apiKeys: [KEY], twilioAuthToken: TWILIO_TOKEN });
  return createEdgeApp({ link: new FakeWorkerLink(), auth }).app;
}

const post = (
  app: ReturnType<typeof edge>,
  url: string,
  headers: Record<string, string>,
  form: Record<string, string> = FORM,
) => app.request(url, { method: 'POST', headers, body: new URLSearchParams(form) });

describe('the TwiML webhook with Twilio signatures checked', () => {
  const path = `${TWILIO_TWIML_PATH}?api_key=${KEY}&voice=en-us`;

  it('answers a request Twilio signed over the URL it called and its form', async () => {
    const url = `http://edge.test${path}`;
    const response = await post(edge(), url, { 'x-twilio-signature': twilioSignature(TWILIO_TOKEN, url, FORM) });
    expect(response.status).toBe(200);
    expect(await response.text()).toMatch(/<Connect><Stream url="ws:\/\/edge\.test\/v1\/telephony\/twilio">/);
  });

  it('checks the public URL behind a TLS proxy (X-Forwarded-Proto / X-Forwarded-Host)', async () => {
    const publicUrl = `https://voice.example.com${path}`;
    const response = await post(edge(), `http://10.0.0.7:8080${path}`, {
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'voice.example.com',
      'x-twilio-signature': twilioSignature(TWILIO_TOKEN, publicUrl, FORM),
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('wss://voice.example.com/v1/telephony/twilio');
  });

  it('refuses a missing, forged or stale signature with a coded 403 naming the header', async () => {
    const url = `http://edge.test${path}`;
    const signed = twilioSignature(TWILIO_TOKEN, url, FORM);
    const cases: [string, Record<string, string>, Record<string, string>][] = [
      ['no signature', {}, FORM],
      ['signed with another token', { 'x-twilio-signature': twilioSignature('other', url, FORM) }, FORM],
      ['a form changed after signing', { 'x-twilio-signature': signed }, { ...FORM, To: '+15559999' }],
    ];
    for (const [what, headers, form] of cases) {
      const response = await post(edge(), url, headers, form);
      expect(response.status, what).toBe(403);
      const body = (await response.json()) as { error: { code: string; param: string } };
      expect(body.error, what).toMatchObject({ code: 'forbidden', param: 'X-Twilio-Signature' });
    }
    // Another query string (another assistant) is another URL: its signature does not carry over.
    const other = await post(edge(), `http://edge.test${path}&delivery_policy=interrupt`, {
      'x-twilio-signature': signed,
    });
    expect(other.status).toBe(403);
  });

  it('still needs the API key: a valid signature alone picks no tenant', async () => {
    const url = `http://edge.test${TWILIO_TWIML_PATH}`;
    const response = await post(edge(), url, { 'x-twilio-signature': twilioSignature(TWILIO_TOKEN, url, FORM) });
    expect(response.status).toBe(401);
  });
});
