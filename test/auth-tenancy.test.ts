import {
  type ApiKeyRecord,
  ClientTokens,
  createTenancy,
  EdgeAuth,
  InMemoryKeyStore,
  KeyedHash,
  type KeyStore,
  RedisKeyStore,
  RedisUsageMeter,
  type Tenancy,
} from '@venus/edge';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTlsRuntime, type TlsRuntime } from './fixtures/tls/tls-runtime.ts';
import { trustingFetch } from './fixtures/tls/trusting-fetch.ts';
import { removeRedisKeys } from './support/redis.ts';

/**
 * Auth and tenancy at the edge, over https/wss, against the embedded runtime, with issued keys in
 * Redis and usage counted in Redis: who may connect (401), what they may do (403), how much
 * (429 and `rate_limited`), and that no tenant reaches another's sessions.
 */
const SECRET = 'auth-tenancy-test-deployment-secret';
const ADMIN = 'sk-operator-auth-tenancy-test';
const prefix = `test:auth:${crypto.randomUUID()}:`;

/** Wall clock the edge's expiries are measured by; tests move it forward. */
let skewMs = 0;
const now = () => Date.now() + skewMs;

let rt: TlsRuntime;
let redis: Redis;
let auth: EdgeAuth;
let tenancy: Tenancy;
let fetchTls: typeof fetch;

beforeAll(async () => {
  redis = new Redis(process.env.REDIS_URL!);
  auth = new EdgeAuth({ secret: SECRET, adminKey: ADMIN, store: new RedisKeyStore({ client: redis, prefix }), now });
  tenancy = createTenancy({
    limits: {
      tenants: {
        single: { maxConcurrentSessions: 1 },
        bursty: { sessions: { perMinute: 1, burst: 2 } },
        chatty: { requests: { perMinute: 6, burst: 3 } },
        quiet: { audioIn: { perMinute: 0.6, burst: 1 } },
      },
    },
    meter: new RedisUsageMeter({ client: redis, prefix }),
  });
  rt = await startTlsRuntime({ auth, tenancy, defaultConfig: { chunkMs: 160 } });
  fetchTls = trustingFetch(rt.ca);
});

afterAll(async () => {
  await rt?.close();
  await tenancy?.meter.close();
  await removeRedisKeys(prefix);
  await redis?.quit();
});

async function api(
  method: string,
  path: string,
  credential?: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown>; headers: Headers }> {
  const response = await fetchTls(`${rt.edge.url}${path}`, {
    method,
    headers: {
      ...(credential ? { authorization: `Bearer ${credential}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return {
    status: response.status,
    json: (await response.json()) as Record<string, unknown>,
    headers: response.headers,
  };
}

/** An issued key over REST with the operator's key. */
async function issue(tenant: string, scopes: string[]): Promise<{ key: string; id: string }> {
  const created = await api('POST', '/v1/keys', ADMIN, { tenant, scopes });
  expect(created.status).toBe(201);
  return { key: String(created.json.key), id: String(created.json.id) };
}

async function clientToken(key: string, body: unknown = {}): Promise<string> {
  const minted = await api('POST', '/v1/realtime/client_secrets', key, body);
  expect(minted.status).toBe(200);
  return String(minted.json.value);
}

interface ServerEvent {
  type: string;
  [key: string]: unknown;
}

/** A wss client that queues what it receives, so a test can wait for the next event of a type. */
class Client {
  readonly received: ServerEvent[] = [];
  readonly #waiters = new Set<() => void>();

  constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      this.received.push(JSON.parse(String(data)) as ServerEvent);
      for (const wake of this.#waiters) wake();
    });
  }

  async next(type: string, match: (event: ServerEvent) => boolean = () => true): Promise<ServerEvent> {
    for (;;) {
      const index = this.received.findIndex((event) => event.type === type && match(event));
      if (index >= 0) return this.received.splice(index, 1)[0]!;
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.#waiters.delete(wake);
          resolve();
        };
        this.#waiters.add(wake);
      });
    }
  }

  send(event: object): void {
    this.socket.send(JSON.stringify(event));
  }

  async close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return;
    const closed = new Promise((resolve) => this.socket.once('close', resolve));
    this.socket.close(1000, 'done');
    await closed;
  }
}

type Connected =
  | { ok: true; client: Client; sessionId: string; session: Record<string, unknown> }
  | { ok: false; status: number; headers: Headers };

/** Opens /v1/realtime over wss with the credential as Bearer, or as the browser subprotocol. */
function connect(
  credential: string | undefined,
  options: { subprotocol?: boolean; query?: string } = {},
): Promise<Connected> {
  const url = `${rt.edge.url.replace('https', 'wss')}/v1/realtime${options.query ?? ''}`;
  const protocols = options.subprotocol && credential ? ['realtime', `openai-insecure-api-key.${credential}`] : [];
  const headers = credential && !options.subprotocol ? { authorization: `Bearer ${credential}` } : undefined;
  const socket = new WebSocket(url, protocols, { ca: rt.ca, ...(headers ? { headers } : {}) });
  const client = new Client(socket);
  return new Promise((resolve, reject) => {
    socket.once('unexpected-response', (_request, response) => {
      const responseHeaders = new Headers();
      for (const [name, value] of Object.entries(response.headers))
        if (typeof value === 'string') responseHeaders.set(name, value);
      resolve({ ok: false, status: response.statusCode ?? 0, headers: responseHeaders });
      socket.terminate();
    });
    socket.once('error', reject);
    socket.once('open', () => {
      client.next('session.created').then((created) => {
        const session = created.session as Record<string, unknown>;
        resolve({ ok: true, client, sessionId: String(session.id), session });
      }, reject);
    });
  });
}

async function rejectedStatus(credential: string | undefined, options?: { subprotocol?: boolean }): Promise<number> {
  const connected = await connect(credential, options);
  if (connected.ok) {
    await connected.client.close();
    return 101;
  }
  return connected.status;
}

describe('credentials (401)', () => {
  it('refuses missing, unknown, expired, revoked and forged credentials, on REST and on the upgrade', async () => {
    const message = async (credential?: string) => {
      const { status, json } = await api('GET', '/v1/usage', credential);
      expect(status).toBe(401);
      expect(json.error).toMatchObject({ type: 'authentication_error', code: 'unauthorized' });
      return String((json.error as { message: string }).message);
    };
    expect(await message()).toMatch(/missing credentials/);
    expect(await message('vk_abcdefghijkl_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')).toMatch(/unknown API key/);
    expect(await message('sk-not-a-key')).toMatch(/unknown API key/);

    const expiring = await api('POST', '/v1/keys', ADMIN, {
      tenant: 'acme',
      scopes: ['usage:read'],
      expires_in_seconds: 60,
    });
    const revoked = await issue('acme', ['usage:read', 'realtime']);
    const token = await clientToken(revoked.key);
    expect((await api('GET', '/v1/usage', String(expiring.json.key))).status).toBe(200);
    expect(await rejectedStatus(token)).toBe(101);
    expect((await api('DELETE', `/v1/keys/${revoked.id}`, ADMIN)).status).toBe(200);
    expect(await message(revoked.key)).toMatch(/was revoked/);
    // Revoking the key that minted a client token ends the token too.
    expect(await message(token)).toMatch(/client token: .*revoked/);

    const forger = new ClientTokens(KeyedHash.create('some-other-deployment-secret', 'client-token'));
    const forged = await forger.mint({
      tenant: 'acme',
      keyId: 'admin',
      scopes: ['realtime'],
      expiresAt: 4_000_000_000,
    });
    expect(await message(forged.value)).toMatch(/signature/);

    const live = await issue('acme', ['realtime']);
    const shortLived = await clientToken(live.key, { expires_after: { anchor: 'created_at', seconds: 10 } });
    skewMs += 61_000;
    try {
      expect(await message(String(expiring.json.key))).toMatch(/expired/);
      expect(await message(shortLived)).toMatch(/client token expired/);
      for (const credential of [undefined, forged.value, shortLived, revoked.key]) {
        expect(await rejectedStatus(credential)).toBe(401);
        expect(await rejectedStatus(credential, { subprotocol: true })).toBe(401);
      }
    } finally {
      skewMs -= 61_000;
    }
  });
});

describe('scopes and tenants (403)', () => {
  it('refuses a credential the scope it lacks and every other tenant', async () => {
    const usageOnly = await issue('acme', ['usage:read']);
    const realtimeOnly = await issue('acme', ['realtime']);
    expect(await rejectedStatus(usageOnly.key)).toBe(403);
    expect((await api('POST', '/v1/realtime/client_secrets', usageOnly.key, {})).status).toBe(403);
    const usage = await api('GET', '/v1/usage', realtimeOnly.key);
    expect(usage.status).toBe(403);
    expect(usage.json.error).toMatchObject({ type: 'permission_error', code: 'forbidden' });
    expect((await api('POST', '/v1/keys', realtimeOnly.key, { scopes: ['realtime'] })).status).toBe(403);

    const acmeAdmin = await issue('acme', ['admin', 'realtime', 'usage:read']);
    const globex = await issue('globex', ['realtime', 'usage:read']);
    expect((await api('POST', '/v1/keys', acmeAdmin.key, { tenant: 'globex', scopes: ['realtime'] })).status).toBe(403);
    expect((await api('POST', '/v1/keys', acmeAdmin.key, { scopes: ['functions:deploy'] })).status).toBe(403);
    expect((await api('GET', '/v1/keys?tenant=globex', acmeAdmin.key)).status).toBe(403);
    // Another tenant's key is answered as an unknown one (404): a 403 would confirm that it exists.
    expect((await api('DELETE', `/v1/keys/${globex.id}`, acmeAdmin.key)).status).toBe(404);
    expect((await api('POST', `/v1/keys/${globex.id}/rotate`, acmeAdmin.key, {})).status).toBe(404);
    expect((await api('GET', '/v1/usage?tenant=globex', acmeAdmin.key)).status).toBe(403);
    expect((await api('GET', '/v1/usage?tenant=globex', ADMIN)).status).toBe(200);

    const token = await clientToken(acmeAdmin.key);
    expect((await api('POST', '/v1/realtime/client_secrets', token, {})).status).toBe(403);
    expect((await api('GET', '/v1/keys', token)).status).toBe(403);
  });

  it('never lets one tenant reach another tenant session or its items', async () => {
    const acme = await issue('acme', ['realtime']);
    const globex = await issue('globex', ['realtime']);
    const a = await connect(await clientToken(acme.key), { subprotocol: true });
    const b = await connect(await clientToken(globex.key));
    if (!a.ok || !b.ok) throw new Error('both sessions should open');
    try {
      a.client.send(userText('what time is it in Tokyo'));
      const item = await a.client.next('response.output_item.added');
      const itemId = String((item.item as { id: string }).id);

      b.client.send({ type: 'conversation.item.truncate', item_id: itemId, content_index: 0, audio_end_ms: 0 });
      expect((await b.client.next('error')).error).toMatchObject({ code: 'wrong_session', param: 'item_id' });
      b.client.send({ type: 'venus.playback.ack', item_id: itemId, played_ms: 10 });
      expect((await b.client.next('error')).error).toMatchObject({ code: 'wrong_session' });

      // Naming another tenant's session on the upgrade is refused; naming one's own is not supported.
      // Another tenant's session is answered as an unknown one (404), not confirmed by a 403.
      expect(await statusWithQuery(globex.key, `?call_id=${a.sessionId}`)).toBe(404);
      expect(await statusWithQuery(acme.key, `?call_id=${a.sessionId}`)).toBe(400);
      expect(await statusWithQuery(acme.key, '?call_id=sess_nonexistent')).toBe(404);
    } finally {
      await a.client.close();
      await b.client.close();
    }
  });
});

describe('key lifecycle', () => {
  it('creates, lists without secrets, rotates with a grace period and revokes over REST', async () => {
    const admin = await issue('initech', ['admin', 'realtime', 'usage:read']);
    const created = await api('POST', '/v1/keys', admin.key, { name: 'backend', scopes: ['realtime'] });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ tenant: 'initech', name: 'backend', scopes: ['realtime'], expires_at: null });
    const key = String(created.json.key);
    const id = String(created.json.id);
    expect(key.startsWith(String(created.json.prefix))).toBe(true);

    const stored = await redis.get(`${prefix}apikey:${id}`);
    expect(stored).not.toContain(key.slice(String(created.json.prefix).length));
    const listed = await api('GET', '/v1/keys', admin.key);
    expect(listed.json.data).toEqual(
      expect.arrayContaining([expect.objectContaining({ id, prefix: `vk_${id}_`, tenant: 'initech' })]),
    );
    expect(JSON.stringify(listed.json)).not.toMatch(/"key"|"hash"/);
    expect((listed.json.data as { tenant: string }[]).every((entry) => entry.tenant === 'initech')).toBe(true);

    // The key rotates itself: the new key works at once, the old one for 30 more seconds.
    const rotated = await api('POST', `/v1/keys/${id}/rotate`, key, { previous_expires_in_seconds: 30 });
    expect(rotated.status).toBe(201);
    expect(rotated.json).toMatchObject({ rotated_from: id, previous: { id, rotated_to: rotated.json.id } });
    const successor = String(rotated.json.key);
    expect(await rejectedStatus(key)).toBe(101);
    expect(await rejectedStatus(successor)).toBe(101);
    skewMs += 31_000;
    try {
      expect(await rejectedStatus(key)).toBe(401);
      expect(await rejectedStatus(successor)).toBe(101);
    } finally {
      skewMs -= 31_000;
    }

    const deleted = await api('DELETE', `/v1/keys/${String(rotated.json.id)}`, admin.key);
    expect(deleted.json).toMatchObject({ deleted: true, revoked_at: expect.any(Number) });
    expect(await rejectedStatus(successor)).toBe(401);
    expect((await api('DELETE', '/v1/keys/nosuchkeyid0', admin.key)).status).toBe(404);
  });
});

describe('client tokens', () => {
  it('open sessions for the minting tenant with the minted settings, as Bearer or subprotocol, until expiry', async () => {
    const server = await issue('umbrella', ['realtime', 'usage:read']);
    const minted = await api('POST', '/v1/realtime/client_secrets', server.key, {
      expires_after: { anchor: 'created_at', seconds: 300 },
      session: { type: 'realtime', model: 'ignored', instructions: 'Be terse.', voice: 'en-gb' },
    });
    expect(minted.json).toMatchObject({ value: expect.stringMatching(/^ek_/), session: { instructions: 'Be terse.' } });
    expect(Number(minted.json.expires_at)).toBeGreaterThanOrEqual(Math.floor(now() / 1000) + 299);
    const before = (await api('GET', '/v1/usage', server.key)).json.sessions as number;

    for (const subprotocol of [true, false]) {
      const connected = await connect(String(minted.json.value), { subprotocol });
      if (!connected.ok) throw new Error(`refused: ${connected.status}`);
      expect(connected.client.socket.protocol).toBe(subprotocol ? 'realtime' : '');
      expect(connected.session).toMatchObject({ instructions: 'Be terse.', voice: 'en-gb' });
      connected.client.send({ type: 'session.update', session: {} });
      const updated = await connected.client.next('session.updated');
      expect(updated.session).toMatchObject({ instructions: 'Be terse.', voice: 'en-gb' });
      await connected.client.close();
    }
    const usage = await api('GET', '/v1/usage', server.key);
    expect(usage.json).toMatchObject({ tenant: 'umbrella', sessions: before + 2 });

    const badSettings = await api('POST', '/v1/realtime/client_secrets', server.key, {
      session: { venus: { chunk_ms: 5 } },
    });
    expect(badSettings.status).toBe(400);
    expect(
      (await api('POST', '/v1/realtime/client_secrets', server.key, { expires_after: { seconds: 99_999 } })).status,
    ).toBe(400);
  });
});

describe('limits (429 and rate_limited)', () => {
  it('caps concurrent sessions per tenant with 429 and Retry-After, and frees the slot on close', async () => {
    const single = await issue('single', ['realtime']);
    const first = await connect(single.key);
    if (!first.ok) throw new Error('first session refused');
    const second = await connect(single.key);
    expect(second).toMatchObject({ ok: false, status: 429 });
    if (!second.ok) expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Another tenant is not affected.
    expect(await rejectedStatus((await issue('acme', ['realtime'])).key)).toBe(101);
    await first.client.close();
    await waitUntil(async () => (await rejectedStatus(single.key)) === 101);
  });

  it('limits how fast a tenant opens sessions and sends requests', async () => {
    const bursty = await issue('bursty', ['realtime']);
    expect(await rejectedStatus(bursty.key)).toBe(101);
    expect(await rejectedStatus(bursty.key)).toBe(101);
    const third = await connect(bursty.key);
    expect(third).toMatchObject({ ok: false, status: 429 });
    if (!third.ok) expect(Number(third.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    const chatty = await issue('chatty', ['usage:read']);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await api('GET', '/v1/usage', chatty.key)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const limited = await api('GET', '/v1/usage', chatty.key);
    expect(limited.json.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('answers input audio over the tenant budget with one rate_limited error and keeps the session', async () => {
    const quiet = await issue('quiet', ['realtime']);
    const connected = await connect(quiet.key);
    if (!connected.ok) throw new Error('refused');
    const { client } = connected;
    try {
      const halfSecond = Buffer.alloc(24_000).toString('base64');
      for (let i = 0; i < 4; i++)
        client.send({ type: 'input_audio_buffer.append', audio: halfSecond, event_id: `a${i}` });
      const error = await client.next('error');
      expect(error.error).toMatchObject({ code: 'rate_limited', type: 'rate_limit_error', event_id: 'a2' });
      client.send(userText('hello'));
      await client.next('conversation.item.added');
      expect(client.received.filter((event) => event.type === 'error')).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

describe('usage metering', () => {
  it('counts sessions, audio in and out, delegations and function time per tenant', async () => {
    const metered = await issue('metered', ['realtime', 'usage:read']);
    const other = await issue('unmetered', ['usage:read']);
    const connected = await connect(metered.key);
    if (!connected.ok) throw new Error('refused');
    const { client } = connected;
    const silence = Buffer.alloc(4800).toString('base64');
    const pump = setInterval(() => client.send({ type: 'input_audio_buffer.append', audio: silence }), 100);
    try {
      client.send(userText("what's the weather in Paris"));
      const delegation = await client.next('venus.delegation');
      await client.next('venus.work.result', (event) => event.work_id === delegation.work_id);
    } finally {
      clearInterval(pump);
      await client.close();
    }
    const usage = await api('GET', '/v1/usage', metered.key);
    expect(usage.json).toMatchObject({ object: 'venus.usage', tenant: 'metered', sessions: 1, delegations: 1 });
    expect(usage.json.audio_in_seconds).toBeGreaterThan(0.5);
    expect(usage.json.audio_out_seconds).toBeGreaterThan(0.5);
    expect(usage.json.function_seconds).toBeGreaterThan(0);
    expect((await api('GET', '/v1/usage', other.key)).json).toMatchObject({
      tenant: 'unmetered',
      sessions: 0,
      since: null,
    });
  });
});

describe.each([
  ['InMemoryKeyStore', () => new InMemoryKeyStore()],
  ['RedisKeyStore', () => new RedisKeyStore({ client: redis, prefix: `${prefix}contract:${crypto.randomUUID()}:` })],
] as [string, () => KeyStore][])('%s (the KeyStore contract)', (_name, makeStore) => {
  const record = (id: string, tenant: string, createdAt: number): ApiKeyRecord => ({
    id,
    tenant,
    name: null,
    scopes: ['realtime'],
    hash: 'ab'.repeat(32),
    createdAt,
    expiresAt: null,
    revokedAt: null,
    rotatedFrom: null,
    rotatedTo: null,
  });

  it('gets, replaces and lists records by tenant, oldest first, and copies rather than shares them', async () => {
    const store = makeStore();
    expect(await store.get('nope')).toBeUndefined();
    await store.put(record('k2', 'a', 2));
    await store.put(record('k1', 'a', 1));
    await store.put(record('k3', 'b', 3));
    expect((await store.list('a')).map((r) => r.id)).toEqual(['k1', 'k2']);
    expect((await store.list()).map((r) => r.id)).toEqual(['k1', 'k2', 'k3']);
    expect(await store.list('c')).toEqual([]);
    const got = await store.get('k1');
    got!.revokedAt = 99;
    expect((await store.get('k1'))?.revokedAt).toBeNull();
    await store.put({ ...record('k1', 'a', 1), revokedAt: 5 });
    expect((await store.get('k1'))?.revokedAt).toBe(5);
    expect((await store.list('a')).map((r) => r.id)).toEqual(['k1', 'k2']);
    await store.close();
  });
});

function userText(text: string) {
  return {
    type: 'conversation.item.create',
    item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] },
  };
}

async function statusWithQuery(credential: string, query: string): Promise<number> {
  const connected = await connect(credential, { query });
  if (connected.ok) {
    await connected.client.close();
    return 101;
  }
  return connected.status;
}

/** Waits for an outcome (30 s budget on a loaded machine), not for a time. */
async function waitUntil(condition: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition never held');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
