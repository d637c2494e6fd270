import { describe, expect, it } from 'vitest';
import { MIN_MASKED_SECRET_CHARS, secretMask } from './secret-mask.ts';

describe('secretMask', () => {
  const secret = 'tok_Leak+Check/Secret=91&q"\\';
  const mask = secretMask({ TOKEN: secret, SHORT: 'abc' });

  it('replaces a secret and its base64, base64url and URL-encoded forms in text', () => {
    for (const form of [
      secret,
      Buffer.from(secret).toString('base64'),
      Buffer.from(secret).toString('base64url'),
      encodeURIComponent(secret),
    ]) {
      expect(mask.text(`sent ${form} twice ${form}`)).toBe('sent [secret TOKEN] twice [secret TOKEN]');
    }
  });

  it('replaces the JSON-escaped secret in JSON text and keeps it JSON', () => {
    const json = JSON.stringify({ data: { token: secret, list: [`Bearer ${secret}`] } });
    const masked = mask.json(json);
    expect(JSON.parse(masked)).toEqual({ data: { token: '[secret TOKEN]', list: ['Bearer [secret TOKEN]'] } });
  });

  it(`leaves values shorter than ${MIN_MASKED_SECRET_CHARS} characters and other text alone`, () => {
    expect(mask.text('abc is not masked')).toBe('abc is not masked');
    expect(secretMask({}).text('nothing to hide')).toBe('nothing to hide');
  });
});
