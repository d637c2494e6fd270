import { SessionConfigSchema } from '@venus/protocol';
import { describe, expect, it } from 'vitest';
import type { Principal } from '../../auth/principal.ts';
import { FakeWorkerLink } from '../../testing/fake-worker-link.ts';
import { CallSession } from '../call-session.ts';
import { parseTwilioMessage } from './twilio-messages.ts';
import { TwilioStream } from './twilio-stream.ts';

const principal: Principal = {
  tenant: 'acme',
  scopes: ['realtime'],
  keyId: 'k1',
  kind: 'client_token',
  operator: false,
};
const config = SessionConfigSchema.parse({});

/** A FAKE Twilio socket and FAKE credential check around a real TwilioStream and CallSession. */
function setup(tokenOk = true) {
  const link = new FakeWorkerLink();
  const sent: string[] = [];
  let closed: { code: number; reason: string } | undefined;
  const stream = new TwilioStream({
    send: (text) => sent.push(text),
    close: (code, reason) => {
      closed = { code, reason };
    },
    authenticate: async (token) =>
      tokenOk && token === 'ek_good' ? { ok: true, principal } : { ok: false, message: 'invalid credentials' },
    openCall: (media, who) => {
      const call = new CallSession({ link, media, tenant: who.tenant, config, law: 'pcmu', sessionId: 'sess_t' });
      call.start();
      return call;
    },
  });
  const start = () =>
    stream.handleMessage(
      JSON.stringify({ event: 'start', streamSid: 'MZ1', start: { customParameters: { venus_token: 'ek_good' } } }),
    );
  const media = (payload = Buffer.alloc(160, 0xff).toString('base64')) =>
    stream.handleMessage(JSON.stringify({ event: 'media', streamSid: 'MZ1', media: { track: 'inbound', payload } }));
  return { link, sent, stream, start, media, closed: () => closed };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('TwilioStream', () => {
  it('opens the call at start and relays the media held while the token was checked', async () => {
    const { link, start, media, stream } = setup();
    stream.handleMessage(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }));
    start();
    media();
    media();
    await settle();
    expect(link.framesOf('open')[0]).toMatchObject({ tenant: 'acme' });
    expect(link.framesOf('audio').length).toBe(2);
    stream.handleMessage(JSON.stringify({ event: 'dtmf', streamSid: 'MZ1', dtmf: { digit: '3' } }));
    expect(link.framesOf('dtmf')[0]?.digit).toBe('3');
    stream.handleMessage(JSON.stringify({ event: 'stop', streamSid: 'MZ1', stop: {} }));
    expect(link.framesOf('close').length).toBe(1);
  });

  it('refuses bad messages, counts them, and lives on', async () => {
    const { link, start, media, stream, closed } = setup();
    media(); // before start
    stream.handleMessage('not json');
    stream.handleMessage(JSON.stringify({ event: 'nonsense' }));
    stream.handleMessage(new Uint8Array([1, 2]));
    start();
    await settle();
    media('***');
    stream.handleMessage(JSON.stringify({ event: 'media', streamSid: 'MZ9', media: { payload: '' } }));
    stream.handleMessage(JSON.stringify({ event: 'dtmf', streamSid: 'MZ1', dtmf: { digit: 'xx' } }));
    expect(stream.refused).toBe(7);
    expect(closed()).toBeUndefined();
    media();
    expect(link.framesOf('open').length).toBe(1);
    expect(link.framesOf('audio').length).toBe(1);
  });

  it('closes the stream (1008) without a session when the token does not check out', async () => {
    const { link, start, closed } = setup(false);
    start();
    await settle();
    expect(closed()).toMatchObject({ code: 1008 });
    expect(link.framesOf('open')).toEqual([]);
  });

  it('names the field that was wrong', () => {
    expect(parseTwilioMessage(JSON.stringify({ event: 'mark', streamSid: 'MZ1', mark: {} }))).toEqual({
      ok: false,
      message: 'mark.name: Invalid input: expected string, received undefined',
    });
  });
});
