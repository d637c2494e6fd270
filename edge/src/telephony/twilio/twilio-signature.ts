import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header Twilio signs its webhooks with. */
export const TWILIO_SIGNATURE_HEADER = 'x-twilio-signature';

/**
 * The `X-Twilio-Signature` of a webhook request: HMAC-SHA1, keyed with the account's auth token,
 * over the full URL Twilio requested (query included) followed by every POST parameter, sorted by
 * name, as name then value with no separators; base64. Written here rather than taken from the
 * `twilio` package: that is a whole REST client (and its dependencies) for ten lines of HMAC.
 *
 * @example
 *   twilioSignature('12345', 'https://mycompany.com/myapp.php?foo=1&bar=2', { CallSid: 'CA1234567890ABCDE' });
 */
export function twilioSignature(authToken: string, url: string, params: Readonly<Record<string, string>>): string {
  const data = Object.keys(params)
    .sort()
    .reduce((signed, name) => signed + name + params[name], url);
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

/**
 * Whether `signature` signs this request. Twilio may sign the URL with or without the scheme's
 * default port (it adds `:443` for some webhooks), so both forms are tried. Constant-time compare.
 */
export function twilioSignatureValid(
  authToken: string,
  signature: string | undefined,
  url: string,
  params: Readonly<Record<string, string>>,
): boolean {
  if (!signature) return false;
  const presented = Buffer.from(signature);
  return urlForms(url).some((form) => {
    const expected = Buffer.from(twilioSignature(authToken, form, params));
    return expected.length === presented.length && timingSafeEqual(expected, presented);
  });
}

function urlForms(url: string): string[] {
  const parsed = new URL(url);
  const defaultPort = parsed.protocol === 'https:' ? '443' : parsed.protocol === 'http:' ? '80' : '';
  if (parsed.port !== '' || defaultPort === '') return [url];
  const withPort = `${parsed.protocol}//${parsed.username ? `${parsed.username}:${parsed.password}@` : ''}${parsed.hostname}:${defaultPort}${parsed.pathname}${parsed.search}`;
  return [url, withPort];
}
