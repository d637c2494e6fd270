import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-venus-signature';
export const TIMESTAMP_HEADER = 'x-venus-timestamp';

/**
 * `sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">` keyed with the tenant secret: what an HTTP
 * function receives in `x-venus-signature`, next to the Unix-seconds `x-venus-timestamp`.
 *
 * @example
 *   const signature = signVenusRequest(secret, '1767225600', body); // "sha256=3f1c…"
 */
export function signVenusRequest(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/**
 * What an endpoint should do with a request: recompute the signature in constant time and refuse
 * timestamps more than `toleranceSec` (default 300) away from now, which stops replays.
 *
 * @example
 *   verifyVenusSignature({ secret, body, timestamp: req.headers['x-venus-timestamp'],
 *     signature: req.headers['x-venus-signature'] }); // true or false
 */
export function verifyVenusSignature(input: {
  secret: string;
  body: string;
  timestamp: string | undefined;
  signature: string | undefined;
  nowMs?: number;
  toleranceSec?: number;
}): boolean {
  const { timestamp, signature } = input;
  if (timestamp === undefined || signature === undefined || !/^\d{1,12}$/.test(timestamp)) return false;
  const skew = Math.abs((input.nowMs ?? Date.now()) / 1000 - Number(timestamp));
  if (skew > (input.toleranceSec ?? 300)) return false;
  const expected = Buffer.from(signVenusRequest(input.secret, timestamp, input.body));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
