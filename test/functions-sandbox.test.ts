import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  FunctionPlatform,
  MemoryFunctionStore,
  ModuleSandbox,
  type SandboxJob,
  SandboxThread,
} from '@venus/harness-functions';
import type { FunctionSpecInput, InvocationErrorCode } from '@venus/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Deployed modules that misbehave in every way we know of. Each must fail its own invocation with
 * a clear code, and the platform must go on serving the next one.
 */
// Its fetch probes call a loopback test server, which only an operator's VENUS_FUNCTIONS_ALLOW_PRIVATE=1
// allows; the refusal itself is tested in sandbox-hardening.test.ts.
const sandbox = new ModuleSandbox({ maxThreads: 4, warm: 1, fetch: globalThis.fetch });
const catalog = new FunctionPlatform({ store: new MemoryFunctionStore(), sandbox });
let server: Server;
let granted: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.url, pong: true }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  granted = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  await catalog.deploy(
    'acme',
    module('healthy', "export default async ({ n }) => ({ speech: 'ok ' + n, data: n * 2 })"),
  );
});

afterAll(async () => {
  await catalog.close();
  await sandbox.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function module(name: string, source: string, extra: Record<string, unknown> = {}): FunctionSpecInput {
  return {
    name,
    description: `Sandbox probe ${name}.`,
    parameters: { type: 'object', properties: { n: { type: 'integer' } }, additionalProperties: true },
    kind: { type: 'module', source, limits: { cpuMs: 300, memoryMb: 32, wallMs: 3000 }, ...extra },
  };
}

let counter = 0;
async function expectContained(
  source: string,
  code: InvocationErrorCode,
  message: RegExp,
  extra: Record<string, unknown> = {},
): Promise<void> {
  const name = `probe_${++counter}`;
  await catalog.deploy('acme', module(name, source, extra));
  const result = await catalog.invoke('acme', name, {});
  expect(result.ok).toBe(false);
  expect(result.error?.code).toBe(code);
  expect(result.error?.message).toMatch(message);
  // The platform lives on: the next ordinary invocation works.
  expect(await catalog.invoke('acme', 'healthy', { n: counter })).toMatchObject({ ok: true, speech: `ok ${counter}` });
}

describe('module sandbox: abuse is contained', () => {
  it('process.exit is not there', async () => {
    await expectContained(
      'export default async () => { process.exit(1); }',
      'capability_denied',
      /process is not available/,
    );
  });

  it('reading the environment or files finds neither process nor require', async () => {
    await expectContained(
      'export default async () => process.env.REDIS_URL',
      'capability_denied',
      /process is not available/,
    );
    await expectContained(
      'export default async () => require("node:fs").readFileSync("/etc/passwd", "utf8")',
      'capability_denied',
      /require is not available/,
    );
    await expectContained(
      'export default async () => (await import("node:fs")).readFileSync("/etc/passwd", "utf8")',
      'capability_denied',
      /import\(\) is not available/,
    );
  });

  it('static imports (fs, net, child_process) are refused at deploy and nothing is stored', async () => {
    for (const specifier of ['node:fs', 'node:net', 'child_process']) {
      const spec = module('importer', `import x from '${specifier}'; export default () => typeof x;`);
      await expect(catalog.deploy('acme', spec)).rejects.toMatchObject({ code: 'invalid_arguments' });
    }
    expect(await catalog.get('acme', 'importer')).toBeNull();
  });

  it('the error of a refused import() leads nowhere: its constructor is the sandbox realm', async () => {
    await expectContained(
      `export default async () => {
        try { await import('node:fs'); } catch (error) {
          return error.constructor.constructor('return process')().env;
        }
      }`,
      'capability_denied',
      /process is not available/,
    );
    await expectContained(
      'export default async (args, ctx) => ctx.log.constructor("return process")().exit(1)',
      'capability_denied',
      /process is not available/,
    );
  });

  it('an endless synchronous loop hits the CPU limit', async () => {
    await expectContained('export default async () => { while (true) {} }', 'cpu_limit', /more than its 300 ms of CPU/);
  });

  it('an endless loop after an await hits the CPU limit too', async () => {
    await expectContained(
      'export default async () => { await new Promise((r) => setTimeout(r, 5)); for (;;) {} }',
      'cpu_limit',
      /CPU/,
    );
  });

  it('allocating 2 GB on the heap kills only that worker', async () => {
    await expectContained(
      'export default async () => { const hoard = []; for (;;) hoard.push(new Array(1e6).fill(Math.random())); }',
      'memory_limit',
      /ran out of memory \(heap limit 32 MB\)/,
      { limits: { cpuMs: 20_000, memoryMb: 32, wallMs: 20_000 } },
    );
  });

  it('allocating 2 GB of array buffers is refused', async () => {
    await expectContained(
      'export default async () => new Uint8Array(2 * 1024 ** 3).length',
      'memory_limit',
      /exceeds the function's memory limit/,
    );
    await expectContained(
      'export default async () => { const parts = []; for (let i = 0; i < 2048; i++) parts.push(new ArrayBuffer(1024 * 1024)); }',
      'memory_limit',
      /exceeds/,
    );
  });

  it('fetch is absent without grants and refused for hosts outside them', async () => {
    await expectContained(
      `export default async () => (await fetch('http://${'127.0.0.1'}:1/')).status`,
      'capability_denied',
      /fetch is not available/,
    );
    await expectContained(
      "export default async () => (await fetch('http://example.com/')).status",
      'capability_denied',
      /fetch to example\.com is not granted/,
      { grants: { fetch: ['127.0.0.1:1'], env: [] } },
    );
  });

  it('fetch reaches a granted host', async () => {
    await catalog.deploy(
      'acme',
      module('pinger', `export default async () => ({ data: await (await fetch('http://${granted}/ping')).json() })`, {
        grants: { fetch: [granted], env: [] },
      }),
    );
    expect(await catalog.invoke('acme', 'pinger', {})).toMatchObject({ ok: true, data: { path: '/ping', pong: true } });
  });

  it('a function that keeps waiting forever is stopped at the wall-clock limit', async () => {
    await expectContained(
      'export default () => new Promise(() => { const again = () => setTimeout(again, 20); again(); })',
      'wall_timeout',
      /wall-clock limit/,
      { limits: { cpuMs: 10_000, memoryMb: 32, wallMs: 400 } },
    );
  });

  it('a promise that can never settle fails at once', async () => {
    await expectContained('export default () => new Promise(() => {})', 'no_result', /can never settle/);
  });

  it('a reply that is not JSON fails as invalid output', async () => {
    await expectContained('export default async () => ({ big: 10n })', 'invalid_output', /not JSON/);
  });

  it('a thrown error is reported with its name and message', async () => {
    await expectContained(
      'export default async () => { throw new RangeError("too far") }',
      'function_error',
      /^RangeError: too far$/,
    );
  });

  it('an invocation whose caller gives up is cancelled', async () => {
    await catalog.deploy('acme', module('slow', 'export default () => new Promise((r) => setTimeout(r, 10_000))'));
    const controller = new AbortController();
    const pending = catalog.invoke('acme', 'slow', {}, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    expect(await pending).toMatchObject({ ok: false, error: { code: 'cancelled' } });
    expect((await catalog.invoke('acme', 'healthy', { n: 1 })).ok).toBe(true);
  });
});

describe('sandbox thread', () => {
  const job = (id: number, source: string): SandboxJob => ({
    id,
    mode: 'invoke',
    source,
    args: '{}',
    env: {},
    grants: { fetch: [] },
    limits: { cpuMs: 200, memoryMb: 32 },
    meta: { functionName: 'probe', version: 1, workId: 'w', session: 's' },
    deadlineAt: Date.now() + 5000,
  });

  it('survives a CPU-limited loop and runs the next job on the same thread', async () => {
    const thread = new SandboxThread(32);
    try {
      await thread.ready;
      const looped = await thread.run(job(1, 'export default () => { for (;;) {} }'), { wallMs: 5000 });
      expect(looped).toMatchObject({ ok: false, error: { code: 'cpu_limit' } });
      expect(thread.alive).toBe(true);
      const next = await thread.run(job(2, 'export default () => "still here"'), { wallMs: 5000 });
      expect(next).toMatchObject({ ok: true, value: '"still here"' });
    } finally {
      await thread.terminate();
    }
  });
});
