import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * HTTP Digest authentication for SIP (RFC 3261 §22, RFC 2617 with qop=auth, MD5 as RFC 8760 still
 * allows). Nonces are stateless: a timestamp signed with a per-process key, valid for
 * `nonceLifetimeMs`, so no per-caller state grows with callers.
 */
export interface DigestOptions {
  realm: string;
  /** Default 5 minutes. */
  nonceLifetimeMs?: number;
  now?: () => number;
}

export type DigestVerdict = 'ok' | 'missing' | 'stale' | 'wrong';

const md5 = (text: string) => createHash('md5').update(text).digest('hex');

export class DigestAuth {
  readonly realm: string;
  readonly #key = randomBytes(32);
  readonly #lifetimeMs: number;
  readonly #now: () => number;

  constructor(options: DigestOptions) {
    this.realm = options.realm;
    this.#lifetimeMs = options.nonceLifetimeMs ?? 5 * 60_000;
    this.#now = options.now ?? Date.now;
  }

  /** The WWW-Authenticate value of a 401. */
  challenge(stale = false): string {
    const time = this.#now().toString(36);
    const nonce = `${time}.${this.#sign(time)}`;
    return `Digest realm="${this.realm}", nonce="${nonce}", algorithm=MD5, qop="auth"${stale ? ', stale=true' : ''}`;
  }

  /** Checks an Authorization header against the user's password. */
  verify(authorization: string | undefined, method: string, user: string, password: string): DigestVerdict {
    if (authorization === undefined) return 'missing';
    const p = parseDigest(authorization);
    if (p === undefined || p.username !== user || p.realm !== this.realm) return p === undefined ? 'missing' : 'wrong';
    const [time, signature] = (p.nonce ?? '').split('.');
    if (time === undefined || signature === undefined || !safeEqual(signature, this.#sign(time))) return 'stale';
    if (this.#now() - Number.parseInt(time, 36) > this.#lifetimeMs) return 'stale';
    if ((p.algorithm ?? 'MD5').toUpperCase() !== 'MD5' || p.uri === undefined || p.response === undefined)
      return 'wrong';
    const ha1 = md5(`${user}:${this.realm}:${password}`);
    const ha2 = md5(`${method}:${p.uri}`);
    const expected =
      p.qop === undefined
        ? md5(`${ha1}:${p.nonce}:${ha2}`)
        : md5(`${ha1}:${p.nonce}:${p.nc ?? ''}:${p.cnonce ?? ''}:${p.qop}:${ha2}`);
    return safeEqual(expected, p.response.toLowerCase()) ? 'ok' : 'wrong';
  }

  #sign(text: string): string {
    return createHmac('sha256', this.#key).update(text).digest('base64url').slice(0, 22);
  }
}

/** The parameters of a `Digest ...` credentials value, or undefined when it is not one. */
export function parseDigest(value: string): Record<string, string> | undefined {
  const match = /^\s*Digest\s+(.*)$/is.exec(value);
  if (match === null) return undefined;
  const out: Record<string, string> = {};
  const re = /([a-z0-9-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/gi;
  for (let m = re.exec(match[1]!); m !== null; m = re.exec(match[1]!)) out[m[1]!.toLowerCase()] = m[2] ?? m[3] ?? '';
  return out;
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
