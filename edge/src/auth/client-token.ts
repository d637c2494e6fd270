import { z } from 'zod';
import { base64Url, fromBase64Url } from './api-key-format.ts';
import type { AuthFailureReason } from './api-keys.ts';
import type { KeyedHash } from './keyed-hash.ts';
import { ScopeSchema } from './scopes.ts';

const PREFIX = 'ek_';

/** The signed content of a client token; short field names keep it small enough for a header. */
const ClaimsSchema = z.object({
  v: z.literal(1),
  /** Token id, for logs. */
  i: z.string(),
  t: z.string(),
  /** The API key that minted it: revoking that key revokes its tokens. */
  k: z.string(),
  s: z.array(ScopeSchema),
  /** Expiry, epoch seconds (OpenAI's `expires_at`). */
  e: z.number().int(),
  c: z.record(z.string(), z.unknown()).optional(),
});
type Claims = z.infer<typeof ClaimsSchema>;

export interface ClientTokenClaims {
  tokenId: string;
  tenant: string;
  keyId: string;
  scopes: Claims['s'];
  expiresAt: number;
  session?: Record<string, unknown>;
}

export type TokenCheck =
  | { ok: true; claims: ClientTokenClaims }
  | { ok: false; reason: AuthFailureReason; message: string };

/** Longest token accepted: it travels in a WebSocket subprotocol header. */
export const MAX_CLIENT_TOKEN_CHARS = 6144;

export function isClientToken(value: string): boolean {
  return value.startsWith(PREFIX);
}

/**
 * Short-lived client tokens for browsers, in the shape of OpenAI's ephemeral keys (`ek_…` with an
 * `expires_at`): `ek_<claims>.<HMAC-SHA-256>`, the claims being tenant, scopes, expiry, the minting
 * key and optional session settings. Checking one needs only the deployment secret (no store
 * round trip for the signature), so any edge can accept a token another edge minted.
 *
 * A token can open any number of sessions until it expires, as OpenAI's client secrets can: the
 * short lifetime (10 s to 2 h, 10 min by default) is the control, and revoking the API key that
 * minted it ends all of its tokens early.
 *
 * @example
 *   const tokens = new ClientTokens(KeyedHash.create(secret, 'client-token'));
 *   const { value } = await tokens.mint({ tenant: 'acme', keyId: 'k1', scopes: ['realtime'], expiresAt });
 *   (await tokens.check(value)).ok; // true until expiresAt
 */
export class ClientTokens {
  readonly #hash: Promise<KeyedHash>;
  readonly #now: () => number;

  constructor(hash: Promise<KeyedHash>, now: () => number = Date.now) {
    this.#hash = hash;
    this.#now = now;
  }

  async mint(claims: Omit<ClientTokenClaims, 'tokenId'>): Promise<{ value: string; tokenId: string }> {
    const tokenId = base64Url(crypto.getRandomValues(new Uint8Array(12)));
    const body: Claims = {
      v: 1,
      i: tokenId,
      t: claims.tenant,
      k: claims.keyId,
      s: claims.scopes,
      e: claims.expiresAt,
      ...(claims.session === undefined ? {} : { c: claims.session }),
    };
    const payload = base64Url(new TextEncoder().encode(JSON.stringify(body)));
    const mac = base64Url(await (await this.#hash).sign(signedText(payload)));
    return { value: `${PREFIX}${payload}.${mac}`, tokenId };
  }

  /** Signature first, then expiry: an expired token is only called expired if it is genuine. */
  async check(value: string): Promise<TokenCheck> {
    const match = /^ek_([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/.exec(value);
    if (match === null || value.length > MAX_CLIENT_TOKEN_CHARS) {
      return { ok: false, reason: 'invalid', message: 'malformed client token' };
    }
    const [, payload, mac] = match as unknown as [string, string, string];
    if (!(await (await this.#hash).verifyBase64Url(signedText(payload), mac))) {
      return { ok: false, reason: 'forged', message: 'client token signature does not verify' };
    }
    const bytes = fromBase64Url(payload);
    let parsed: ReturnType<typeof ClaimsSchema.safeParse> | undefined;
    try {
      parsed = bytes === undefined ? undefined : ClaimsSchema.safeParse(JSON.parse(new TextDecoder().decode(bytes)));
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined || !parsed.success) {
      return { ok: false, reason: 'invalid', message: 'client token claims are not readable' };
    }
    const claims = parsed.data;
    if (claims.e * 1000 <= this.#now()) {
      const at = new Date(claims.e * 1000).toISOString();
      return { ok: false, reason: 'expired', message: `client token expired at ${at}` };
    }
    return {
      ok: true,
      claims: {
        tokenId: claims.i,
        tenant: claims.t,
        keyId: claims.k,
        scopes: claims.s,
        expiresAt: claims.e,
        ...(claims.c === undefined ? {} : { session: claims.c }),
      },
    };
  }
}

function signedText(payload: string): string {
  return `ek1.${payload}`;
}
