import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxFetch } from '../harness-functions/src/platform/sandbox/sandbox-egress.ts';
import { type RuntimeProcess, startRuntimeProcess } from './support/runtime-process.ts';
import {
  type Attack,
  BUFFERS,
  EGRESS_FLOOD,
  ESCAPES,
  LOOPS,
  networkAttacks,
  OUTPUTS,
  POLLUTION,
  TIMERS,
} from './support/sandbox-attacks.ts';

/**
 * A hostile tenant's campaign against the functions platform as `npm start` runs it: a real child
 * process, functions deployed and invoked over `/v1/functions` with issued keys. Every escape and
 * exhaustion attempt (support/sandbox-attacks.ts) must end in a coded failure or be cut by its
 * budget; the process must live with its resident memory within a bound derived from the budgets;
 * and another tenant's canary function must keep answering throughout, never made to wait out one
 * of the attacker's invocations. The figures (canary latency at rest and under attack, RSS) are
 * printed; the only time bound asserted is that budget-derived one.
 */
const ADMIN = 'sk-operator-sandbox-campaign-0123456789';
/** The attacker's limits: the defaults, with a longer wall clock so a held thread is held visibly. */
const ATTACK_LIMITS = { cpuMs: 1000, memoryMb: 64, wallMs: 8000 };
/** The default pool: 8 threads, a tenant holds at most half. */
const ATTACKER_SHARE = 4;

let rt: RuntimeProcess;
let loopback: Server;
let port = 0;
let reached = 0;
const keys: Record<string, string> = {};

beforeAll(async () => {
  loopback = createServer((_req, res) => {
    reached++;
    res.writeHead(200).end('reached');
  });
  // '::' without ipv6Only takes 127.0.0.1, ::1 and ::ffff:127.0.0.1 alike.
  await new Promise<void>((resolve) => loopback.listen(0, '::', resolve));
  port = (loopback.address() as AddressInfo).port;
  rt = await startRuntimeProcess({ VENUS_ADMIN_KEY: ADMIN });
  for (const tenant of ['mallory', 'canary']) {
    const issued = await api('POST', '/v1/keys', ADMIN, { tenant, scopes: ['functions:deploy', 'functions:invoke'] });
    expect(issued.status).toBe(201);
    keys[tenant] = (issued.body as { key: string }).key;
  }
}, 90_000);

afterAll(async () => {
  await rt?.stop();
  loopback?.closeAllConnections();
  await new Promise<void>((resolve) => (loopback ? loopback.close(() => resolve()) : resolve()));
});

async function api(method: string, path: string, key: string, body?: unknown) {
  const response = await fetch(`${rt.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : (JSON.parse(text) as unknown) };
}

interface Invoked {
  status: number;
  ok: boolean;
  speech?: string;
  data?: unknown;
  error?: { code: string; message: string };
  ms: number;
}

async function invoke(tenant: string, name: string, args: unknown = {}): Promise<Invoked> {
  const started = performance.now();
  const { status, body } = await api('POST', `/v1/functions/${name}/invoke`, keys[tenant]!, { args });
  return { status, ...(body as Omit<Invoked, 'status' | 'ms'>), ms: performance.now() - started };
}

async function deploy(tenant: string, name: string, kind: Record<string, unknown>): Promise<void> {
  const spec = {
    name,
    description: `Campaign function ${name}.`,
    parameters: { type: 'object', properties: {}, additionalProperties: true },
    kind,
  };
  const { status, body } = await api('POST', '/v1/functions', keys[tenant]!, spec);
  if (status !== 201) throw new Error(`deploying ${name} answered ${status}: ${JSON.stringify(body)}`);
}

const deployAttack = (name: string, attack: Attack) =>
  deploy('mallory', name, {
    type: 'module',
    source: attack.source,
    limits: ATTACK_LIMITS,
    ...(attack.grants ? { grants: attack.grants } : {}),
  });

/** Why an outcome does not count as contained; null when it does. */
function uncontained(attack: Attack, result: Invoked): string | null {
  if (result.status !== 200) return `HTTP ${result.status}`;
  if (result.ok) {
    if (!attack.contained.includes('ok')) return `finished with ${JSON.stringify(result.data)?.slice(0, 200)}`;
    return attack.harmless?.(result) === false ? `harmful data ${JSON.stringify(result.data)?.slice(0, 200)}` : null;
  }
  const code = result.error?.code as Attack['contained'][number] | undefined;
  return code !== undefined && attack.contained.includes(code) ? null : `failed with ${JSON.stringify(result.error)}`;
}

function figures(ms: number[]) {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0);
  return { n: sorted.length, p50: at(0.5), p95: at(0.95), max: at(1) };
}

const CANARY_SOURCE = 'export default ({ n }) => ({ speech: "alive", data: { next: n + 1 } })';

describe('sandbox campaign against npm start', () => {
  it('contains every attempt while the host lives, its memory stays bounded and another tenant is served', async () => {
    await deploy('canary', 'canary', { type: 'module', source: CANARY_SOURCE });
    const canaryOnce = async (n: number) => {
      const result = await invoke('canary', 'canary', { n });
      expect(result).toMatchObject({ status: 200, ok: true, data: { next: n + 1 } });
      return result.ms;
    };
    const atRest: number[] = [];
    for (let n = 0; n < 20; n++) atRest.push(await canaryOnce(n));

    const attacks = [
      ...TIMERS,
      ...ESCAPES,
      ...POLLUTION,
      ...OUTPUTS,
      ...BUFFERS,
      ...networkAttacks(port),
      EGRESS_FLOOD,
      ...LOOPS,
    ];
    // Wall-holding attacks go first, four at once, so the attacker holds its whole share for seconds.
    attacks.sort((a, b) => Number(b.holdsWall === true) - Number(a.holdsWall === true));
    const held = attacks.filter((a) => a.holdsWall);
    for (let i = 1; i < ATTACKER_SHARE; i++) held.push(...attacks.filter((a) => a.holdsWall));
    const runs = [...held, ...attacks.filter((a) => !a.holdsWall)];
    const names = new Map<Attack, string>();
    for (const [i, attack] of [...new Set(runs)].entries()) {
      names.set(attack, `attack_${i}`);
      await deployAttack(`attack_${i}`, attack);
    }
    await deploy('mallory', 'http_loopback', { type: 'http', url: `http://127.0.0.1:${port}/`, retries: 0 });

    const rssAtRest = rt.rssMb();
    let rssPeak = rssAtRest;
    const sampler = setInterval(() => {
      if (rt.alive()) rssPeak = Math.max(rssPeak, rt.rssMb());
    }, 100);
    let attacking = true;
    const underAttack: number[] = [];
    const canaryLoop = (async () => {
      for (let n = 0; attacking; n++) underAttack.push(await canaryOnce(n));
    })();

    const problems: string[] = [];
    const queue = [...runs];
    const worker = async () => {
      for (let attack = queue.shift(); attack !== undefined; attack = queue.shift()) {
        const result = await invoke('mallory', names.get(attack)!);
        const problem = uncontained(attack, result);
        if (problem !== null) problems.push(`${attack.name}: ${problem}`);
      }
    };
    try {
      await Promise.all(Array.from({ length: ATTACKER_SHARE }, worker));
      const viaHttp = await invoke('mallory', 'http_loopback');
      if (viaHttp.error?.code !== 'egress_refused') problems.push(`http kind to loopback: ${JSON.stringify(viaHttp)}`);
      // After all that, a fresh invocation of the attacker's own sees clean intrinsics.
      await deploy('mallory', 'after', {
        type: 'module',
        source:
          'export default () => ({ polluted: ({}).polluted ?? null, push: String([].push).includes("native code"), thenable: "then" in {} })',
      });
      const after = await invoke('mallory', 'after');
      expect(after).toMatchObject({ ok: true, data: { polluted: null, push: true, thenable: false } });
      // What the host keeps of a function's logs is clipped line by line, whatever the context did.
      const logger = attacks.find((a) => a.name.includes('log unclipped lines'))!;
      const logs = await api('GET', `/v1/functions/${names.get(logger)}/logs?limit=50`, keys.mallory!);
      const kept = JSON.stringify(logs.body);
      console.log(`logs kept for the log-flooding attack: ${kept.length} characters`);
      expect(kept.length).toBeLessThan(50 * 200 * 1024);
    } finally {
      attacking = false;
      await canaryLoop;
      clearInterval(sampler);
    }

    const rest = figures(atRest);
    const attacked = figures(underAttack);
    console.log(
      `sandbox campaign: ${runs.length} attack invocations (${attacks.length} kinds); canary at rest ${JSON.stringify(rest)} ms, ` +
        `under attack ${JSON.stringify(attacked)} ms; RSS at rest ${Math.round(rssAtRest)} MiB, peak ${Math.round(rssPeak)} MiB`,
    );
    expect(problems).toEqual([]);
    expect(reached).toBe(0);
    // The host lives and still answers.
    expect(rt.alive()).toBe(true);
    expect((await fetch(`${rt.url}/healthz`)).status).toBe(200);
    expect(rt.stderr()).not.toMatch(/uncaught exception|unhandled rejection/i);
    // Served throughout: every canary call answered, and none waited out an attacker's invocation
    // (a pool that queued the canary behind the attacker's held share would make it wait its wall clock).
    expect(underAttack.length).toBeGreaterThan(0);
    expect(attacked.max).toBeLessThan(ATTACK_LIMITS.wallMs);
    // Resident memory: the attacker's share of threads, each at most its heap (old + young
    // generation) plus its array-buffer budget and the engine check's slack, plus a thread's own
    // overhead, over what the process held at rest.
    const perThreadMb = ATTACK_LIMITS.memoryMb + 16 + (ATTACK_LIMITS.memoryMb + 16) + 48;
    expect(rssPeak).toBeLessThan(rssAtRest + ATTACKER_SHARE * perThreadMb + 256);
  }, 300_000);

  it('a module function cannot follow a redirect to loopback: the 302 is answered, nothing reaches the target', async () => {
    // The granted host (a real server, reached here without the guard as a public host would be)
    // redirects to loopback; the sandbox's fetch must hand the redirect back, not follow it.
    const redirector = createServer((_req, res) => {
      res.writeHead(302, { location: `http://127.0.0.1:${port}/SET/owned/1` }).end();
    });
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
    const granted = `127.0.0.1:${(redirector.address() as AddressInfo).port}`;
    const before = reached;
    try {
      const outcome = await sandboxFetch(
        { url: `http://${granted}/go`, method: 'GET', headers: {}, body: null },
        [granted],
        globalThis.fetch,
        new AbortController().signal,
      );
      expect(outcome).toMatchObject({ ok: true, response: { status: 302 } });
      expect(reached).toBe(before);
    } finally {
      await new Promise<void>((resolve) => redirector.close(() => resolve()));
    }
  });
});
