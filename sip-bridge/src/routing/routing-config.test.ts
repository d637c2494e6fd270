import { describe, expect, it } from 'vitest';
import { parseMessage, type SipRequest } from '../sip/message.ts';
import { parseRoutingConfig, routeFor } from './routing-config.ts';

function invite(uri: string, extra = ''): SipRequest {
  const text = `INVITE ${uri} SIP/2.0\r\nVia: SIP/2.0/UDP h:5060;branch=z9hG4bK1\r\nFrom: <sip:a@h>;tag=1\r\nTo: <${uri}>\r\nCall-ID: c\r\nCSeq: 1 INVITE\r\n${extra}\r\n`;
  const parsed = parseMessage(Buffer.from(text));
  if (!parsed.ok || parsed.message.kind !== 'request') throw new Error('bad fixture');
  return parsed.message;
}

const config = parseRoutingConfig({
  trunks: [{ name: 'carrier', username: 'trunk', password: 'pw' }],
  routes: [
    {
      number: '1000',
      headers: { 'X-Venus-Assistant': 'sales' },
      tenant: 'acme',
      assistant: { voice: 'en-gb', instructions: 'Sell.' },
    },
    { number: '1000', tenant: 'acme', trunk: 'carrier', assistant: { deliveryPolicy: 'interrupt' } },
    { number: '*', tenant: 'fallback' },
  ],
});

describe('SIP routing', () => {
  it('picks the first route whose number and headers match, with its assistant and trunk', () => {
    const sales = routeFor(config, invite('sip:1000@h', 'X-Venus-Assistant: sales\r\n'));
    expect(sales).toMatchObject({
      tenant: 'acme',
      trunk: undefined,
      assistant: { voice: 'en-gb', instructions: 'Sell.' },
    });
    const plain = routeFor(config, invite('sip:1000@h'));
    expect(plain).toMatchObject({
      tenant: 'acme',
      trunk: { username: 'trunk' },
      assistant: { deliveryPolicy: 'interrupt' },
    });
    expect(routeFor(config, invite('sip:2000@h'))?.tenant).toBe('fallback');
  });

  it('answers no route where nothing matches, and refuses a config naming a missing trunk', () => {
    const strict = parseRoutingConfig({ routes: [{ number: '1000', tenant: 't' }] });
    expect(routeFor(strict, invite('sip:2000@h'))).toBeUndefined();
    expect(() => parseRoutingConfig({ routes: [{ number: '1', tenant: 't', trunk: 'none' }] })).toThrow(
      /routes\.0\.trunk: no trunk named "none"/,
    );
    expect(() => parseRoutingConfig({ routes: [] })).toThrow(/invalid_settings|routes/);
  });
});
