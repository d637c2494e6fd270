import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  catalogFunction,
  FunctionPlatform,
  MemoryFunctionStore,
  ModuleSandbox,
  parametersValidator,
  type SandboxJob,
  SandboxThread,
} from '@venus/harness-functions';
import { FUNCTIONS_LIMITS, type FunctionSpecInput, VenusError } from '@venus/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from './support/until.ts';

/**
 * Regression tests for issue 15, items 1-5: the functions sandbox and argument validation under
 * abuse. Each block opens with what broke. The platform here has the default egress guard (no
 * private networks), as production does.
 */
const sandbox = new ModuleSandbox({ maxThreads: 4, warm: 1 });
const catalog = new FunctionPlatform({ store: new MemoryFunctionStore(), sandbox });

/** A loopback HTTP server that counts requests and holds them until released. */
let server: Server;
let loopback: string;
let requests = 0;
const held: ServerResponse[] = [];
let holding = false;

beforeAll(async () => {
  server = createServer((_req: IncomingMessage, res: ServerResponse) => {
    requests++;
    if (holding) held.push(res);
    else res.writeHead(200, { 'content-type': 'application/json' }).end('{"reached":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  loopback = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await Promise.all([
    catalog.close().then(() => sandbox.close()),
    new Promise<void>((resolve) => server.close(() => resolve())),
  ]);
});

const PROBE_LIMITS = { cpuMs: 2000, memoryMb: 32, wallMs: 10_000 };
/** A module function taking any arguments; `extra` overrides kind fields (grants, limits). */
const module = (name: string, source: string, extra: Record<string, unknown> = {}): FunctionSpecInput => ({
  name,
  description: `Hardening probe ${name}.`,
  parameters: { type: 'object', properties: {}, additionalProperties: true },
  kind: { type: 'module', source, limits: PROBE_LIMITS, ...extra },
});

let counter = 0;
async function invokeSource(source: string, extra: Record<string, unknown> = {}) {
  const name = `hardening_${++counter}`;
  await catalog.deploy('acme', module(name, source, extra));
  return catalog.invoke('acme', name, {});
}

describe('array_buffer_budget_bypass_via_species', () => {
  // What broke: with memoryMb 64, `b.constructor = undefined; b.slice(0)` twenty times returned
  // 1 GB to the function. Only the ArrayBuffer and typed-array constructors were charged; slice,
  // map and friends allocate through the realm's unwrapped intrinsics when `constructor` is unset,
  // and the worker's heap limit does not cover array-buffer memory.
  const bypasses: Record<string, string> = {
    'ArrayBuffer.prototype.slice':
      'const b = new ArrayBuffer(8 * 2 ** 20); b.constructor = undefined; return () => b.slice(0);',
    'Uint8Array.prototype.slice':
      'const a = new Uint8Array(8 * 2 ** 20); a.constructor = undefined; return () => a.slice(0);',
    'Uint8Array.prototype.map':
      'const a = new Uint8Array(8 * 2 ** 20); a.constructor = undefined; return () => a.map((x) => x);',
    'Uint8Array.prototype.filter':
      'const a = new Uint8Array(8 * 2 ** 20); a.constructor = undefined; return () => a.filter(() => true);',
    'Uint8Array.prototype.toReversed': 'const a = new Uint8Array(8 * 2 ** 20); return () => a.toReversed();',
    'Uint8Array.prototype.with': 'const a = new Uint8Array(8 * 2 ** 20); return () => a.with(0, 1);',
    'a species constructor object':
      'const a = new Float64Array(2 ** 20); a.constructor = { [Symbol.species]: Float64Array }; return () => a.slice(0);',
    'Float64Array.from an array-like': 'return () => Float64Array.from({ length: 2 ** 20 });',
  };

  it.each(Object.entries(bypasses))('%s is charged against memoryMb', async (_name, setup) => {
    const result = await invokeSource(
      `export default () => { const make = (() => { ${setup} })(); const keep = [];
         for (let i = 0; i < 20; i++) keep.push(make()); return keep.length; }`,
    );
    expect(result.ok).toBe(false);
    expect(result.error).toMatchObject({ code: 'memory_limit' });
  });

  it('a function within its budget still copies buffers', async () => {
    const result = await invokeSource(
      'export default () => { const b = new ArrayBuffer(1024); b.constructor = undefined; return b.slice(0).byteLength + new Uint8Array(16).map((x) => x + 1)[0]; }',
    );
    expect(result).toMatchObject({ ok: true, data: 1025 });
  });

  it('replacing the getters the budget reads does not make buffers free', async () => {
    const result = await invokeSource(
      `export default () => {
         Object.defineProperty(ArrayBuffer.prototype, 'byteLength', { get: () => 0 });
         Reflect.apply = () => undefined;
         WeakSet.prototype.has = () => true;
         const b = new ArrayBuffer(8 * 2 ** 20); b.constructor = undefined;
         const keep = []; for (let i = 0; i < 20; i++) keep.push(b.slice(0)); return keep.length; }`,
    );
    expect(result.error).toMatchObject({ code: 'memory_limit' });
  });
});

describe('module_fetch_reached_loopback', () => {
  // What broke: a module granted `fetch: ["127.0.0.1:6395"]` wrote a key into Redis; one granted
  // the server's own address reached its admin routes. Only HTTP-kind functions went through the
  // private-address guard; module fetch used the sandbox thread's own unguarded fetch.
  it('a granted loopback host is refused, and nothing reaches it', async () => {
    const before = requests;
    const result = await invokeSource(`export default async () => (await fetch('http://${loopback}/SET/k/v')).status`, {
      grants: { fetch: [loopback], env: [] },
    });
    expect(result).toMatchObject({ ok: false, error: { code: 'capability_denied' } });
    expect(result.error?.message).toMatch(/127\.0\.0\.1.*private address/);
    expect(requests).toBe(before);
  });

  it('a name that resolves to loopback is refused on the address connected to (DNS rebinding)', async () => {
    const port = loopback.split(':')[1];
    const before = requests;
    const result = await invokeSource(`export default async () => (await fetch('http://localhost:${port}/')).status`, {
      grants: { fetch: [`localhost:${port}`], env: [] },
    });
    expect(result).toMatchObject({ ok: false, error: { code: 'capability_denied' } });
    expect(result.error?.message).toMatch(/localhost resolves to .*private address/);
    expect(requests).toBe(before);
  });

  it('with private networks allowed by the operator, the same grant reaches the host', async () => {
    const open = new FunctionPlatform({ store: new MemoryFunctionStore(), http: { allowPrivateNetworks: true } });
    try {
      await open.deploy(
        'acme',
        module('loopback_ok', `export default async () => (await fetch('http://${loopback}/')).json()`, {
          grants: { fetch: [loopback], env: [] },
        }),
      );
      expect(await open.invoke('acme', 'loopback_ok', {})).toMatchObject({ ok: true, data: { reached: true } });
    } finally {
      await open.close();
    }
  });
});

describe('argument_pattern_redos_on_event_loop', () => {
  // What broke: an argument schema `pattern: "^(a+)+$"` and a 29-character argument took 1.7 s to
  // validate on the event loop that serves every session, doubling per character. Patterns ran on
  // V8's backtracking engine; with a backtracking engine the 64 KB argument below would not finish
  // within this test's timeout.
  const validator = parametersValidator({
    type: 'object',
    properties: { s: { type: 'string', pattern: '^(a+)+$' } },
    required: ['s'],
    additionalProperties: false,
  });

  it('a catastrophic pattern against a 64 KB argument is answered', () => {
    const evil = `${'a'.repeat(FUNCTIONS_LIMITS.maxArgsBytes - 16)}!`;
    expect(validator.safeParse({ s: evil }).success).toBe(false);
    expect(validator.safeParse({ s: 'aaaa' }).success).toBe(true);
  });

  it('patterns keep JSON Schema meaning (unanchored search)', () => {
    const code = parametersValidator({
      type: 'object',
      properties: { code: { type: 'string', pattern: '\\d{3}' } },
      required: ['code'],
      additionalProperties: false,
    });
    expect(code.safeParse({ code: 'room 101' }).success).toBe(true);
    expect(code.safeParse({ code: 'room' }).success).toBe(false);
  });

  it('a pattern RE2 cannot run in linear time (a backreference) is refused at deploy', async () => {
    const spec = module('backref', 'export default () => 1');
    spec.parameters = {
      type: 'object',
      properties: { s: { type: 'string', pattern: '^(a+)\\1$' } },
      additionalProperties: false,
    };
    await expect(catalog.deploy('acme', spec)).rejects.toMatchObject({ code: 'invalid_arguments' });
  });
});

describe('sandbox_pool_starved_by_one_tenant', () => {
  // What broke: eight concurrent invocations of one tenant's function that awaited 15 s made another
  // tenant's trivial function wait 14 s: the pool handed every slot to whoever asked first. Here the
  // first tenant's invocations are held by a gate (a loopback request never answered until the end)
  // and the other tenant's call must complete while they are all still held.
  it("another tenant's call runs while one tenant's eight invocations hold their share", async () => {
    const pool = new ModuleSandbox({ maxThreads: 4, warm: 0, fetch: globalThis.fetch });
    const base = { env: {}, limits: { cpuMs: 2000, memoryMb: 32, wallMs: 60_000 } };
    const meta = { functionName: 'probe', version: 1, workId: 'w', session: 's' };
    holding = true;
    const before = requests;
    try {
      let settled = 0;
      const slow = Array.from({ length: 8 }, () =>
        pool
          .run({
            ...base,
            tenant: 'greedy',
            source: `export default async () => (await fetch('http://${loopback}/gate')).status`,
            args: '{}',
            fetchHosts: [loopback],
            meta,
          })
          .finally(() => settled++),
      );
      // The greedy tenant holds its share (half of 4 threads): two requests wait at the gate.
      await until('the greedy tenant holds its share at the gate', () => requests - before === 2);
      const quick = await pool.run({
        ...base,
        tenant: 'polite',
        source: 'export default () => "hello"',
        args: '{}',
        fetchHosts: [],
        meta,
      });
      expect(quick).toMatchObject({ ok: true, value: '"hello"' });
      expect(settled).toBe(0);
      expect(requests - before).toBe(2);

      holding = false;
      for (const res of held.splice(0)) res.writeHead(200).end('{}');
      const outcomes = await Promise.all(slow);
      expect(outcomes.every((outcome) => outcome.ok)).toBe(true);
      expect(requests - before).toBe(8);
    } finally {
      holding = false;
      for (const res of held.splice(0)) res.writeHead(200).end('{}');
      await pool.close();
    }
  });
});

describe('unserialisable_result_escaped_the_sandbox', () => {
  // What broke: a function returning a function, a Symbol or a 5,000-deep object made the invoke
  // API answer 500 internal_error; the deep object through a spoken delegation was marked DELIVERED
  // but never reached the client, and on BullMQ it was retried three times as lost. A 150 MB result
  // string was copied to the main thread before being refused. Results are now serialised and
  // bounded inside the sandbox thread and refused there with invalid_output.
  it.each([
    ['a function', 'export default () => () => 1', /reply is a function/],
    ['a Symbol', 'export default () => Symbol("x")', /reply is a symbol/],
    ['a function inside data', 'export default () => ({ data: { run() {} } })', /reply\.data\.run is a function/],
    [
      'a 5,000-deep object',
      'export default () => { let o = {}; for (let i = 0; i < 5000; i++) o = { o }; return o; }',
      /nested deeper than 64 levels/,
    ],
  ])('%s is refused with a coded error', async (_what, source, message) => {
    const result = await invokeSource(source);
    expect(result).toMatchObject({ ok: false, error: { code: 'invalid_output' } });
    expect(result.error?.message).toMatch(message);
  });

  it('a result over the size limit is refused inside the thread, not copied out', async () => {
    const thread = new SandboxThread(256);
    try {
      await thread.ready;
      const job: SandboxJob = {
        id: 1,
        mode: 'invoke',
        source: 'export default () => "x".repeat(150 * 2 ** 20)',
        args: '{}',
        env: {},
        grants: { fetch: [] },
        limits: { cpuMs: 5000, memoryMb: 256 },
        meta: { functionName: 'big', version: 1, workId: 'w', session: 's' },
        deadlineAt: Date.now() + 30_000,
      };
      const outcome = await thread.run(job, { wallMs: 30_000 });
      expect(outcome).toMatchObject({ ok: false, error: { code: 'invalid_output' } });
      if (!outcome.ok) expect(outcome.error.message).toMatch(`larger than ${FUNCTIONS_LIMITS.maxOutputBytes} bytes`);
    } finally {
      await thread.terminate();
    }
  });

  it('through a delegation the function fails, not retryable, with a reason naming the problem', async () => {
    await catalog.deploy(
      'acme',
      module('deep_reply', 'export default () => { let o = {}; for (let i = 0; i < 5000; i++) o = { o }; return o; }'),
    );
    const record = await catalog.get('acme', 'deep_reply');
    const fn = catalogFunction(catalog, record!);
    const failure = await fn
      .run({}, { signal: new AbortController().signal, session: 's', workId: 'w', progress: () => {} })
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(VenusError.isInstance(failure)).toBe(true);
    expect(failure).toMatchObject({ code: 'function_failed', retryable: false });
    expect(((failure as VenusError).cause as Error).message).toMatch(/invalid_output: .*nested deeper/);
  });
});
