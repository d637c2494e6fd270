import { createHash, randomBytes } from 'node:crypto';
import { parseDigest } from './digest.ts';

const md5 = (text: string) => createHash('md5').update(text).digest('hex');

export interface DigestCredentials {
  username: string;
  password: string;
}

/**
 * The Authorization (or Proxy-Authorization) value answering a 401/407 challenge (RFC 3261 §22.2,
 * RFC 2617: MD5, with qop=auth when the challenge offers it). Undefined for a challenge the bridge
 * cannot answer (not Digest, another algorithm, no nonce), so the caller reports the 401 as is.
 */
export function answerChallenge(
  challenge: string,
  request: { method: string; uri: string },
  credentials: DigestCredentials,
): string | undefined {
  const p = parseDigest(challenge);
  if (p === undefined || p.nonce === undefined || p.realm === undefined) return undefined;
  if ((p.algorithm ?? 'MD5').toUpperCase() !== 'MD5') return undefined;
  const qops = (p.qop ?? '').split(',').map((q) => q.trim().toLowerCase());
  const ha1 = md5(`${credentials.username}:${p.realm}:${credentials.password}`);
  const ha2 = md5(`${request.method}:${request.uri}`);
  const quote = (value: string) => `"${value.replace(/["\\]/g, '')}"`;
  const parts = [
    `username=${quote(credentials.username)}`,
    `realm=${quote(p.realm)}`,
    `nonce=${quote(p.nonce)}`,
    `uri=${quote(request.uri)}`,
    'algorithm=MD5',
  ];
  if (qops.includes('auth')) {
    const cnonce = randomBytes(8).toString('hex');
    const nc = '00000001';
    parts.push(
      `response=${quote(md5(`${ha1}:${p.nonce}:${nc}:${cnonce}:auth:${ha2}`))}`,
      'qop=auth',
      `nc=${nc}`,
      `cnonce=${quote(cnonce)}`,
    );
  } else {
    parts.push(`response=${quote(md5(`${ha1}:${p.nonce}:${ha2}`))}`);
  }
  if (p.opaque !== undefined) parts.push(`opaque=${quote(p.opaque)}`);
  return `Digest ${parts.join(', ')}`;
}
