import { describe, expect, it } from 'vitest';
import { twilioSignature, twilioSignatureValid } from './twilio-signature.ts';

// Twilio's published example (webhook security docs): auth token 12345, this URL, these five
// POST parameters. An external truth, so the code is pinned to Twilio's recipe, not to itself.
const TOKEN = '12345';
const URL_ = 'https://mycompany.com/myapp.php?foo=1&bar=2';
const PARAMS = {
  CallSid: 'CA1234567890ABCDE',
  Caller: '+14158675309',
  Digits: '1234',
  From: '+14158675309',
  To: '+18005551212',
};
const SIGNATURE = 'RSOYDt4T1cUTdK1PDd93/VVr8B8=';

describe('Twilio webhook signatures', () => {
  it("reproduces Twilio's published example, whatever the parameters' order", () => {
    expect(twilioSignature(TOKEN, URL_, PARAMS)).toBe(SIGNATURE);
    const shuffled = {
      To: PARAMS.To,
      Digits: PARAMS.Digits,
      CallSid: PARAMS.CallSid,
      From: PARAMS.From,
      Caller: PARAMS.Caller,
    };
    expect(twilioSignatureValid(TOKEN, SIGNATURE, URL_, shuffled)).toBe(true);
  });

  it('refuses a changed parameter, URL or token, and a missing or malformed signature', () => {
    expect(twilioSignatureValid(TOKEN, SIGNATURE, URL_, { ...PARAMS, Digits: '9999' })).toBe(false);
    expect(twilioSignatureValid(TOKEN, SIGNATURE, `${URL_}&baz=3`, PARAMS)).toBe(false);
    expect(twilioSignatureValid('54321', SIGNATURE, URL_, PARAMS)).toBe(false);
    expect(twilioSignatureValid(TOKEN, undefined, URL_, PARAMS)).toBe(false);
    expect(twilioSignatureValid(TOKEN, 'short', URL_, PARAMS)).toBe(false);
  });

  it('takes a signature made over the URL with its default port spelled out', () => {
    const withPort = twilioSignature(TOKEN, 'https://mycompany.com:443/myapp.php?foo=1&bar=2', PARAMS);
    expect(twilioSignatureValid(TOKEN, withPort, URL_, PARAMS)).toBe(true);
  });
});
