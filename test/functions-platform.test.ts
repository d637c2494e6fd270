import { createHmac, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEdgeApp, createFunctionsApi } from '@venus/edge';
import {
  CatalogDelegationRunner,
  createBuiltinFunctions,
  FunctionPlatform,
  loadMiniflareRuntime,
  MemoryFunctionStore,
  ModuleSandbox,
  RedisFunctionStore,
} from '@venus/harness-functions';
import { type DelegationRequest, FUNCTIONS_LIMITS, type FunctionSpecInput } from '@venus/protocol';
import { Hono } from 'hono';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeWorkerLink } from '../edge/src/testing/fake-worker-link.ts';
import { functionsCatalogContract, greetSpec } from './contracts/functions-catalog-contract.ts';
import { removeRedisKeys } from './support/redis.ts';

// One sandbox pool for the whole file, shared by every platform below.
const sandbox = new ModuleSandbox({ maxThreads: 4, warm: 1 });
afterAll(() => sandbox.close());

functionsCatalogContract('memory', async () => {
  const catalog = new FunctionPlatform({ store: new MemoryFunctionStore(), sandbox });
  return { catalog, cleanup: () => catalog.close() };
});

functionsCatalogContract('redis', async () => {
  const url = process.env.REDIS_URL;
  if (!url) throw new Error('REDIS_URL is not set: the global setup in test/setup/redis-server.ts provides it');
  const prefix = `fn:${randomUUID()}:`;
  const catalog = new FunctionPlatform({ store: new RedisFunctionStore({ url, prefix }), sandbox });
  return {
    catalog,
    cleanup: async () => {
      await catalog.close();
      await removeRedisKeys(prefix, url);
    },
  };
});

interface Received {
  body: string;
  timestamp: string | undefined;
  signature: string | undefined;
  attempt: string | undefined;
}

/** A real HTTP endpoint on 127.0.0.1 that checks signatures itself and answers per scenario. */
async function startEndpoint(
  secret: string,
  answer: (received: Received, res: ServerResponse, attempt: number) => void,
): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const entry: Received = {
        body: Buffer.concat(chunks).toString('utf8'),
        timestamp: req.headers['x-venus-timestamp'] as string | undefined,
        signature: req.headers['x-venus-signature'] as string | undefined,
        attempt: req.headers['x-venus-attempt'] as string | undefined,
      };
      received.push(entry);
      const expected = `sha256=${createHmac('sha256', secret).update(`${entry.timestamp}.${entry.body}`).digest('hex')}`;
      if (entry.signature !== expected) {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"bad signature"}');
        return;
      }
      answer(entry, res, received.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function httpSpec(name: string, url: string, extra: Record<string, unknown> = {}): FunctionSpecInput {
  return {
    name,
    description: 'Looks a city up remotely.',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    kind: { type: 'http', url, secretName: 'HOOK_SECRET', timeoutMs: 2000, retries: 2, ...extra },
  };
}

describe('HTTP functions: egress', () => {
  const secret = 'hook-secret-0123456789';

  it('refuses endpoints on private addresses by default, literal or by name, without sending anything', async () => {
    const catalog = new FunctionPlatform({ store: new MemoryFunctionStore(), sandbox, http: { backoffBaseMs: 10 } });
    await catalog.setSecret('acme', 'HOOK_SECRET', secret);
    const endpoint = await startEndpoint(secret, (_received, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('"should not be reached"');
    });
    try {
      const port = new URL(endpoint.url).port;
      for (const url of [endpoint.url, `http://localhost:${port}/hook`, 'http://169.254.169.254/latest/meta-data/']) {
        await catalog.deploy('acme', httpSpec('internal', url));
        const result = await catalog.invoke('acme', 'internal', { city: 'Paris' }, { workId: 'w1', session: 's1' });
        expect(result, url).toMatchObject({ ok: false, error: { code: 'egress_refused' } });
      }
      expect(endpoint.received).toHaveLength(0);
      const logs = await catalog.logs('acme', 'internal', { limit: 10 });
      expect(JSON.stringify(logs)).toMatch(/private address/);
    } finally {
      await endpoint.close();
      await catalog.close();
    }
  });
});

describe('HTTP functions', () => {
  const secret = 'hook-secret-0123456789';
  let catalog: FunctionPlatform;
  beforeEach(async () => {
    catalog = new FunctionPlatform({
      store: new MemoryFunctionStore(),
      sandbox,
      http: { backoffBaseMs: 10, allowPrivateNetworks: true },
    });
    await catalog.setSecret('acme', 'HOOK_SECRET', secret);
  });

  it('signs the request with the tenant secret (HMAC of timestamp.body) and returns the validated reply', async () => {
    const endpoint = await startEndpoint(secret, (_received, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"speech":"Sunny in Paris","data":{"c":21}}');
    });
    try {
      await catalog.deploy('acme', httpSpec('lookup', endpoint.url));
      const result = await catalog.invoke('acme', 'lookup', { city: 'Paris' }, { workId: 'w1', session: 's1' });
      expect(result).toMatchObject({ ok: true, speech: 'Sunny in Paris', data: { c: 21 } });
      expect(endpoint.received).toHaveLength(1);
      expect(JSON.parse(endpoint.received[0]!.body)).toEqual({
        args: { city: 'Paris' },
        workId: 'w1',
        session: 's1',
        function: 'lookup',
        version: 1,
      });
      expect(Math.abs(Number(endpoint.received[0]!.timestamp) - Date.now() / 1000)).toBeLessThan(60);
    } finally {
      await endpoint.close();
    }
  });

  it('retries a 503 with backoff, signing each attempt, then succeeds', async () => {
    const endpoint = await startEndpoint(secret, (_received, res, attempt) => {
      if (attempt === 1) res.writeHead(503).end('busy');
      else res.writeHead(200, { 'content-type': 'application/json' }).end('"second time lucky"');
    });
    try {
      await catalog.deploy('acme', httpSpec('lookup', endpoint.url));
      const result = await catalog.invoke('acme', 'lookup', { city: 'Oslo' });
      expect(result).toMatchObject({ ok: true, speech: 'second time lucky' });
      expect(endpoint.received.map((r) => r.attempt)).toEqual(['1', '2']);
      expect(result.logs[0]).toMatch(/^attempt 1: HTTP 503: busy; retrying in \d+ ms$/);
    } finally {
      await endpoint.close();
    }
  });

  it('does not retry a 400', async () => {
    const endpoint = await startEndpoint(secret, (_received, res) => {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"unknown city"}');
    });
    try {
      await catalog.deploy('acme', httpSpec('lookup', endpoint.url));
      const result = await catalog.invoke('acme', 'lookup', { city: 'Atlantis' });
      expect(result).toMatchObject({ ok: false, error: { code: 'http_error' } });
      expect(result.error?.message).toContain('HTTP 400');
      expect(endpoint.received).toHaveLength(1);
    } finally {
      await endpoint.close();
    }
  });

  it('gives up after the retries on repeated 5xx', async () => {
    const endpoint = await startEndpoint(secret, (_received, res) => res.writeHead(500).end());
    try {
      await catalog.deploy('acme', httpSpec('lookup', endpoint.url, { retries: 1 }));
      const result = await catalog.invoke('acme', 'lookup', { city: 'Rome' });
      expect(result).toMatchObject({ ok: false, error: { code: 'http_error', message: 'HTTP 500' } });
      expect(endpoint.received).toHaveLength(2);
    } finally {
      await endpoint.close();
    }
  });

  it('times out an endpoint that does not answer', async () => {
    const endpoint = await startEndpoint(secret, () => {
      // never answers
    });
    try {
      await catalog.deploy('acme', httpSpec('lookup', endpoint.url, { timeoutMs: 200, retries: 0 }));
      const result = await catalog.invoke('acme', 'lookup', { city: 'Lima' });
      expect(result).toMatchObject({ ok: false, error: { code: 'http_timeout' } });
    } finally {
      await endpoint.close();
    }
  });

  it('rejects a reply that is not a {speech, data} object', async () => {
    const endpoint = await startEndpoint(secret, (_received, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"speech": 42, "extra": true}');
    });
    try {
      await catalog.deploy('acme', httpSpec('lookup', endpoint.url));
      const result = await catalog.invoke('acme', 'lookup', { city: 'Kyiv' });
      expect(result).toMatchObject({ ok: false, error: { code: 'invalid_output' } });
      expect(endpoint.received).toHaveLength(1);
    } finally {
      await endpoint.close();
    }
  });

  it('refuses a local Worker run without miniflare, and calls a deployed Worker URL like an HTTP function', async () => {
    const script = 'export default { async fetch(request) { return Response.json({ speech: "from the worker" }); } }';
    const local = await catalog
      .deploy('acme', { name: 'edge_fn', description: 'A Worker.', kind: { type: 'cloudflare-worker', script } })
      .then(
        () => null,
        (error: { code?: string }) => error.code,
      );
    expect(local).toBe('unsupported_feature');
    const endpoint = await startEndpoint(secret, (_received, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"speech":"from the worker"}');
    });
    try {
      await catalog.deploy('acme', {
        name: 'edge_fn',
        description: 'A Worker.',
        kind: { type: 'cloudflare-worker', script, url: endpoint.url, secretName: 'HOOK_SECRET' },
      });
      expect(await catalog.invoke('acme', 'edge_fn', {})).toMatchObject({ ok: true, speech: 'from the worker' });
    } finally {
      await endpoint.close();
    }
  });
});

// Local Worker runs need the optional miniflare package; where it is installed, this runs workerd for real.
const workers = await loadMiniflareRuntime();

describe('cloudflare-worker functions run locally in workerd', () => {
  it.skipIf(workers === null)('signs the request, binds the secret as env and validates the reply', async () => {
    const catalog = new FunctionPlatform({ store: new MemoryFunctionStore(), sandbox, workers });
    try {
      await catalog.setSecret('acme', 'HOOK_SECRET', 'worker-secret-123');
      const script = `export default { async fetch(request, env) {
        const body = await request.json();
        const signed = (request.headers.get('x-venus-signature') ?? '').startsWith('sha256=');
        return Response.json({ speech: 'Hi ' + body.args.who, data: { signed, secret: env.HOOK_SECRET === 'worker-secret-123' } });
      } }`;
      await catalog.deploy('acme', {
        name: 'edge_greet',
        description: 'Greets from a Worker.',
        parameters: { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] },
        kind: { type: 'cloudflare-worker', script, secretName: 'HOOK_SECRET' },
      });
      const result = await catalog.invoke('acme', 'edge_greet', { who: 'Ada' });
      expect(result).toMatchObject({ ok: true, speech: 'Hi Ada', data: { signed: true, secret: true } });
      const broken = catalog.deploy('acme', {
        name: 'broken_worker',
        description: 'Does not compile.',
        kind: { type: 'cloudflare-worker', script: 'export default { fetch() { return new Response(' },
      });
      await expect(broken).rejects.toMatchObject({ code: 'invalid_arguments' });
    } finally {
      await catalog.close();
    }
  });
});

describe('REST /v1/functions', () => {
  let catalog: FunctionPlatform;
  let app: Hono;
  beforeEach(() => {
    catalog = new FunctionPlatform({ store: new MemoryFunctionStore(), sandbox });
    app = new Hono();
    app.route('/v1/functions', createFunctionsApi({ catalog }));
  });

  const call = (method: string, path: string, body?: unknown, tenant = 'acme') =>
    app.request(`/v1/functions${path}`, {
      method,
      headers: { 'content-type': 'application/json', 'x-venus-tenant': tenant },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });

  it('deploys, lists, reads, versions, invokes and deletes', async () => {
    const deployed = await call('POST', '', greetSpec());
    expect(deployed.status).toBe(201);
    expect(await deployed.json()).toMatchObject({ name: 'greet', version: 1, kind: 'module' });
    expect((await call('POST', '', greetSpec({}, 'Hi'))).status).toBe(201);

    expect(await (await call('GET', '')).json()).toMatchObject({ functions: [{ name: 'greet', latestVersion: 2 }] });
    expect(await (await call('GET', '/greet')).json()).toMatchObject({ name: 'greet', version: 2 });
    expect(await (await call('GET', '/greet?version=1')).json()).toMatchObject({ version: 1 });
    const versions = await (await call('GET', '/greet/versions')).json();
    expect(versions.versions.map((v: { version: number }) => v.version)).toEqual([1, 2]);

    const invoked = await call('POST', '/greet/invoke', { args: { who: 'Ada' } });
    expect(invoked.status).toBe(200);
    expect(await invoked.json()).toMatchObject({ ok: true, version: 2, speech: 'Hi Ada' });
    const logs = await (await call('GET', '/greet/logs?limit=5')).json();
    expect(logs.logs).toHaveLength(1);

    expect((await call('DELETE', '/greet')).status).toBe(204);
    expect((await call('GET', '/greet')).status).toBe(404);
    expect((await call('DELETE', '/greet')).status).toBe(404);
  });

  it('answers a bad spec with 400 and stores nothing', async () => {
    const bad = await call(
      'POST',
      '',
      greetSpec({ parameters: { type: 'object', properties: { x: { type: 'map' } } } as never }),
    );
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.code).toBe('invalid_arguments');
    const broken = await call('POST', '', greetSpec({ kind: { type: 'module', source: 'export default (' } }));
    expect(broken.status).toBe(400);
    expect((await call('POST', '', '{not json')).status).toBe(400);
    expect(await (await call('GET', '')).json()).toEqual({ functions: [] });
  });

  it('answers oversized source and arguments with 413', async () => {
    const big = 'x'.repeat(FUNCTIONS_LIMITS.maxSourceBytes);
    const source = `export default () => 1; // ${big}`;
    const tooBig = await call('POST', '', greetSpec({ kind: { type: 'module', source } }));
    expect(tooBig.status).toBe(413);
    expect((await tooBig.json()).error.code).toBe('payload_too_large');
    const wayTooBig = await call('POST', '', greetSpec({ kind: { type: 'module', source: source + big } }));
    expect(wayTooBig.status).toBe(413);

    await call('POST', '', greetSpec());
    const hugeArgs = await call('POST', '/greet/invoke', { args: { who: 'y'.repeat(FUNCTIONS_LIMITS.maxArgsBytes) } });
    expect(hugeArgs.status).toBe(413);
    expect(await (await call('GET', '')).json()).toMatchObject({ functions: [{ name: 'greet', latestVersion: 1 }] });
  });

  it('answers unknown and other-tenant functions with the same 404', async () => {
    await call('POST', '', greetSpec());
    const unknown = await call('POST', '/nope/invoke', { args: {} });
    expect(unknown.status).toBe(404);
    for (const [method, path, body] of [
      ['GET', '/greet', undefined],
      ['GET', '/greet/versions', undefined],
      ['GET', '/greet/logs', undefined],
      ['POST', '/greet/invoke', { args: { who: 'x' } }],
      ['DELETE', '/greet', undefined],
    ] as const) {
      const response = await call(method, path, body, 'globex');
      expect(response.status, `${method} ${path}`).toBe(404);
      expect((await response.json()).error.code).toBe('function_not_found');
    }
    expect((await call('GET', '/greet')).status).toBe(200);
  });

  it('answers bad arguments with 400 and runs the function when they are good', async () => {
    await call('POST', '', greetSpec());
    const bad = await call('POST', '/greet/invoke', { args: { who: 42 } });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.code).toBe('invalid_arguments');
  });

  it('sets, lists (names only) and deletes secrets', async () => {
    expect((await call('PUT', '/secrets/API_KEY', { value: 's3cr3t' })).status).toBe(204);
    const listed = await call('GET', '/secrets');
    expect(await listed.json()).toEqual({ secrets: ['API_KEY'] });
    expect(await (await call('GET', '/secrets', undefined, 'globex')).json()).toEqual({ secrets: [] });
    expect((await call('PUT', '/secrets/bad name', { value: 'x' })).status).toBe(400);
    expect((await call('DELETE', '/secrets/API_KEY')).status).toBe(204);
    expect((await call('DELETE', '/secrets/API_KEY')).status).toBe(404);
  });

  it('is mounted by createEdgeApp, where only an open edge lets x-venus-tenant choose the tenant', async () => {
    const open = createEdgeApp({ link: new FakeWorkerLink(), functions: catalog }).app;
    const deploy = (target: typeof open, headers: Record<string, string>) =>
      target.request('/v1/functions', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(greetSpec()),
      });
    expect((await deploy(open, { 'x-venus-tenant': 'initech' })).status).toBe(201);
    expect((await catalog.list('initech')).map((f) => f.name)).toEqual(['greet']);

    const keyed = createEdgeApp({ link: new FakeWorkerLink(), apiKeys: ['sk-test-key'], functions: catalog }).app;
    expect((await deploy(keyed, {})).status).toBe(401);
    const withKey = await deploy(keyed, { authorization: 'Bearer sk-test-key', 'x-venus-tenant': 'initech' });
    expect(withKey.status).toBe(201);
    expect(await withKey.json()).toMatchObject({ version: 1 });
    expect((await catalog.list('default')).map((f) => f.name)).toEqual(['greet']);
    expect((await catalog.list('initech'))[0]?.latestVersion).toBe(1);
  });
});

describe('delegations routed to deployed functions', () => {
  const request = (tenant: string, query: string): DelegationRequest => ({
    workId: `w-${randomUUID()}`,
    session: 's1',
    incarnation: 0,
    tenant,
    query,
    evidenceCutoffSeq: 0,
    chunk: 0,
    createdAtMs: Date.now(),
  });

  it("runs the tenant's own function, with schema-guided arguments, and never another tenant's", async () => {
    const catalog = new FunctionPlatform({ store: new MemoryFunctionStore(), sandbox });
    await catalog.deploy('acme', {
      name: 'stock_quote',
      description: 'Looks up the share price of a stock ticker symbol.',
      parameters: {
        type: 'object',
        properties: { ticker: { type: 'string', enum: ['ACME', 'GLOBEX'] } },
        required: ['ticker'],
      },
      examples: ['what is the stock price of ACME', 'share price for GLOBEX'],
      kind: {
        type: 'module',
        source:
          "export default async ({ ticker }) => ({ speech: ticker + ' trades at 42 dollars.', data: { ticker } })",
      },
    });
    const runner = new CatalogDelegationRunner({
      catalog,
      functions: createBuiltinFunctions({ latencyMs: 0 }),
      cacheMs: 0,
    });
    const signal = new AbortController().signal;

    const acme = await runner.run(request('acme', 'what is the stock price of globex'), { signal });
    expect(acme).toMatchObject({
      ok: true,
      functionName: 'stock_quote',
      result: { text: 'GLOBEX trades at 42 dollars.' },
    });

    const builtin = await runner.run(request('acme', 'what is 6 times 7'), { signal });
    expect(builtin).toMatchObject({ ok: true, functionName: 'calculator' });

    const other = await runner.run(request('globex', 'what is the stock price of globex'), { signal });
    expect(other.ok).toBe(false);
    expect(other.functionName).not.toBe('stock_quote');
    await catalog.close();
  });
});
