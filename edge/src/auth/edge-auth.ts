import { SessionUpdateSchema } from '@venus/protocol';
import { ApiKeys, type StaticKey, type Verified } from './api-keys.ts';
import { ClientTokens, isClientToken } from './client-token.ts';
import { InMemoryKeyStore } from './in-memory-key-store.ts';
import type { KeyStore } from './key-store.ts';
import { KeyedHash } from './keyed-hash.ts';
import { LiveKeySessions } from './live-key-sessions.ts';
import type { Principal } from './principal.ts';
import { SCOPES, SERVICE_SCOPES } from './scopes.ts';

export const DEFAULT_TENANT = 'default';

export interface EdgeAuthOptions {
  /**
   * The deployment secret: pepper of the stored key hashes and root of the client-token signing
   * key. Every edge of a deployment needs the same one, and a shared store needs it to stay the
   * same across restarts; without one a random per-process secret is used.
   */
  secret?: string;
  /** Issued keys; in memory by default. */
  store?: KeyStore;
  /** The operator's bootstrap key: every scope, on every tenant. */
  adminKey?: string;
  /** Simple single-tenant keys (tenant `default`, every scope but `admin`). */
  apiKeys?: readonly string[];
  /** Require a credential even with no admin or static key configured. */
  requireCredentials?: boolean;
  /**
   * The Twilio account's auth token: when set, the TwiML webhook also requires a valid
   * `X-Twilio-Signature` (docs/telephony-twilio.md). `VENUS_TWILIO_AUTH_TOKEN`.
   */
  twilioAuthToken?: string;
  /** Epoch milliseconds (tests pass a fake). */
  now?: () => number;
  /** How often live sessions' keys are checked again (default 30 s): revocation on another edge. */
  keyRecheckMs?: number;
}

/**
 * Who may call the edge: tenant API keys (issued, or static from the environment) and client tokens
 * minted from them. With no admin key and no static key configured the edge is open (a local,
 * single-user deployment): a request with no or an unknown credential acts for tenant `default`.
 *
 * @example
 *   const auth = new EdgeAuth({ secret: process.env.VENUS_AUTH_SECRET, adminKey: process.env.VENUS_ADMIN_KEY });
 *   const verified = await auth.authenticate(presentedApiKey(request));
 *   if (verified.ok) console.log(verified.principal.tenant);
 */
export class EdgeAuth {
  readonly keys: ApiKeys;
  readonly tokens: ClientTokens;
  readonly open: boolean;
  /** Live realtime sessions by key: a revoked key's sessions end (see LiveKeySessions). */
  readonly sessions: LiveKeySessions;
  /** Epoch milliseconds, the clock every expiry is measured by. */
  readonly now: () => number;
  /** Twilio's webhook signing key; unset, Twilio's signature is not checked. */
  readonly twilioAuthToken: string | undefined;
  readonly #store: KeyStore;

  constructor(options: EdgeAuthOptions = {}) {
    if (options.secret === undefined && options.store !== undefined && !(options.store instanceof InMemoryKeyStore)) {
      throw new Error('a shared key store needs a deployment secret (VENUS_AUTH_SECRET) so hashes stay verifiable');
    }
    if (options.secret !== undefined && options.secret.length < 16) {
      throw new Error('the deployment secret (VENUS_AUTH_SECRET) must be at least 16 characters');
    }
    const secret = options.secret ?? crypto.randomUUID() + crypto.randomUUID();
    const now = options.now ?? Date.now;
    this.now = now;
    this.twilioAuthToken = options.twilioAuthToken;
    this.#store = options.store ?? new InMemoryKeyStore();
    const staticKeys: StaticKey[] = (options.apiKeys ?? []).map((key, i) => ({
      key,
      tenant: DEFAULT_TENANT,
      scopes: SERVICE_SCOPES,
      operator: false,
      id: `env_${i + 1}`,
    }));
    if (options.adminKey) {
      staticKeys.push({ key: options.adminKey, tenant: DEFAULT_TENANT, scopes: SCOPES, operator: true, id: 'admin' });
    }
    this.keys = new ApiKeys({ store: this.#store, hash: KeyedHash.create(secret, 'api-key-hash'), staticKeys, now });
    this.tokens = new ClientTokens(KeyedHash.create(secret, 'client-token'), now);
    this.open = staticKeys.length === 0 && options.requireCredentials !== true;
    this.sessions = new LiveKeySessions({
      isLive: (keyId) => this.isLive(keyId),
      ...(options.keyRecheckMs === undefined ? {} : { recheckMs: options.keyRecheckMs }),
    });
  }

  async authenticate(presented: string | undefined): Promise<Verified> {
    const verified = await this.#verify(presented);
    if (verified.ok || !this.open) return verified;
    return { ok: true, principal: OPEN_PRINCIPAL };
  }

  /**
   * Whether the key behind a credential may still be used. The open edge's own id has no key behind
   * it and is good while the edge stays open.
   */
  isLive(keyId: string): ReturnType<ApiKeys['isLive']> {
    if (keyId === OPEN_PRINCIPAL.keyId && this.open) return Promise.resolve({ ok: true });
    return this.keys.isLive(keyId);
  }

  close(): Promise<void> {
    this.sessions.stop();
    return this.#store.close();
  }

  async #verify(presented: string | undefined): Promise<Verified> {
    if (presented === undefined || presented === '') {
      return { ok: false, reason: 'missing', message: 'missing credentials: send Authorization: Bearer <key>' };
    }
    if (!isClientToken(presented)) return this.keys.verify(presented);
    const token = await this.tokens.check(presented);
    if (!token.ok) return token;
    // A token minted while the edge was open has no key behind it and is good only while it stays open.
    const live = await this.isLive(token.claims.keyId);
    if (!live.ok) return { ok: false, reason: live.reason, message: `client token: ${live.message}` };
    const { tenant, scopes, keyId } = token.claims;
    const settings =
      token.claims.session === undefined
        ? undefined
        : SessionUpdateSchema.shape.session.safeParse(token.claims.session);
    if (settings !== undefined && !settings.success) {
      return { ok: false, reason: 'invalid', message: 'client token session settings are not valid' };
    }
    const session = settings?.data;
    return {
      ok: true,
      principal: { tenant, scopes, keyId, kind: 'client_token', operator: false, ...(session ? { session } : {}) },
    };
  }
}

const OPEN_PRINCIPAL: Principal = {
  tenant: DEFAULT_TENANT,
  scopes: SERVICE_SCOPES,
  keyId: 'open',
  kind: 'open',
  operator: false,
};
