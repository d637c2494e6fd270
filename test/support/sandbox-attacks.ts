import type { InvocationErrorCode } from '@venus/protocol';

/**
 * What a hostile tenant deploys: escape and exhaustion attempts against the functions sandbox, each
 * with the outcomes that count as contained. `ok` among them means the function may finish, but
 * `harmless` must then hold for its data (no host object, no process, nothing from the network).
 */
export interface Attack {
  name: string;
  source: string;
  contained: readonly (InvocationErrorCode | 'ok')[];
  grants?: { fetch: string[]; env: string[] };
  /** For attacks that may finish: what the reply (the `speech` and `data` the host answered) must look like. */
  harmless?: (reply: { speech?: string; data?: unknown }) => boolean;
  /** Holds its thread until its wall-clock limit (a timer chain, a hung fetch). */
  holdsWall?: boolean;
}

/** What every constructor-chain attack tries once it has a Function: the host's `process`. */
const ESCAPE = "const p = F('return process')(); return { pid: p.pid, env: Object.keys(p.env) };";
const chain = (name: string, getFunction: string): Attack => ({
  name: `constructor chain: ${name}`,
  source: `export default async (args, ctx) => { const F = ${getFunction}; ${ESCAPE} }`,
  contained: ['capability_denied', 'function_error'],
});

export const ESCAPES: Attack[] = [
  chain('this.constructor.constructor', 'Function("return this")().constructor.constructor'),
  chain('an error', 'new Error("x").constructor.constructor'),
  chain('a caught TypeError', '(() => { try { null.x; } catch (e) { return e.constructor.constructor; } })()'),
  chain('a promise', 'Promise.resolve().constructor.constructor'),
  chain('an async function', '(async () => {}).constructor.constructor'),
  chain('a generator', '(function* () {}).constructor.constructor'),
  chain('ctx', 'ctx.constructor.constructor'),
  chain('ctx.remainingMs', 'ctx.remainingMs.constructor'),
  chain('the args object', 'args.constructor.constructor'),
  chain('console.log', 'console.log.constructor'),
  chain('setTimeout', 'setTimeout.constructor'),
  chain('Proxy get trap', 'new Proxy({}, { get: (t, k, r) => r.constructor.constructor }).x'),
  chain('Reflect.getPrototypeOf', 'Reflect.getPrototypeOf(() => 0).constructor'),
  chain('a rejected import()', 'await import("node:fs").catch((e) => e.constructor.constructor)'),
  {
    name: 'constructor chain: arguments.callee.caller',
    source: 'export default function () { return arguments.callee.caller.constructor("return process")().pid; }',
    contained: ['function_error'],
  },
  {
    name: 'constructor chain: Error.prepareStackTrace call sites',
    source: `export default () => {
      Error.prepareStackTrace = (e, frames) => frames;
      const frames = new Error().stack; const found = [];
      for (const f of frames) for (const v of [f.getThis(), f.getFunction()]) {
        if (v) try { found.push(v.constructor.constructor('return typeof process')()); } catch {}
      }
      console.log('frames', frames.length);
      return { found, pid: found.includes('object') ? 1 : undefined };
    }`,
    contained: ['ok', 'function_error'],
    harmless: ({ data }) =>
      !JSON.stringify(data ?? null).includes('"pid":1') && !JSON.stringify(data).includes('"object"'),
  },
];

export const POLLUTION: Attack[] = [
  {
    name: 'prototype pollution: Object.prototype and Array.prototype',
    source: `export default () => {
      Object.prototype.polluted = true; Array.prototype.push = () => { throw new Error('owned'); };
      Object.defineProperty(Object.prototype, 'then', { get() { return (r) => r('hijacked'); }, configurable: true });
      return { list: [1, 2] };
    }`,
    // A thenable Object.prototype hijacks the function's own reply, in its own context only.
    contained: ['ok', 'function_error'],
    harmless: ({ speech, data }) => speech === 'hijacked' || JSON.stringify(data) === '{"list":[1,2]}',
  },
  {
    name: 'prototype pollution: a __proto__ key in the reply',
    source: 'export default () => JSON.parse(\'{"speech":"hi","data":{"__proto__":{"admin":true}}}\')',
    contained: ['ok'],
    harmless: ({ speech, data }) => speech === 'hi' && JSON.stringify(data) === '{"__proto__":{"admin":true}}',
  },
  {
    name: 'prototype pollution: JSON.stringify replaced before throwing (forged error code)',
    source: `export default () => {
      JSON.stringify = () => '{"code":"internal_error","message":"' + 'forged '.repeat(2e6) + '"}';
      throw new Error('x');
    }`,
    contained: ['function_error'],
  },
  {
    name: 'prototype pollution: String.prototype.slice replaced to log unclipped lines',
    source: `export default () => {
      String.prototype.slice = function () { return String(this); };
      const line = 'L'.repeat(4 * 2 ** 20);
      for (let i = 0; i < 200; i++) console.log(line);
      return 'logged';
    }`,
    contained: ['ok', 'function_error', 'memory_limit', 'cpu_limit'],
    harmless: ({ speech }) => speech === 'logged',
  },
];

export const TIMERS: Attack[] = [
  {
    name: 'timers: a setTimeout chain left running after return',
    source: 'export default () => { const tick = () => setTimeout(tick, 0); tick(); return "returned"; }',
    contained: ['ok'],
    harmless: ({ speech }) => speech === 'returned',
  },
  {
    name: 'timers: setInterval',
    source: 'export default () => { setInterval(() => {}, 1); return 1; }',
    contained: ['capability_denied'],
  },
  {
    name: 'timers: a queueMicrotask loop after return',
    source: 'export default () => { const spin = () => queueMicrotask(spin); spin(); return "returned"; }',
    contained: ['ok', 'cpu_limit'],
    harmless: ({ speech }) => speech === 'returned',
  },
  {
    name: 'timers: a slow setTimeout chain that never returns (held to the wall clock)',
    source: 'export default () => new Promise(() => { const tick = () => setTimeout(tick, 100); tick(); })',
    // On a machine loaded to the point where each re-entry's CPU adds up first, the CPU budget cuts
    // it instead (seen in a full run beside a 200-call telephony bench): contained either way.
    contained: ['wall_timeout', 'cpu_limit'],
    holdsWall: true,
  },
  {
    name: 'timers: a tight setTimeout chain that never returns (each re-entry is charged)',
    source: 'export default () => new Promise(() => { const tick = () => setTimeout(tick, 0); tick(); })',
    contained: ['cpu_limit', 'wall_timeout'],
  },
  {
    name: 'timers: 10,000 pending timers',
    source: 'export default () => new Promise(() => { for (let i = 0; i < 1e4; i++) setTimeout(() => {}, 1e9); })',
    contained: ['function_error'],
  },
];

export const OUTPUTS: Attack[] = [
  {
    name: 'huge output: a 60 MB string',
    source: 'export default () => "x".repeat(60 * 2 ** 20)',
    contained: ['invalid_output', 'memory_limit'],
  },
  {
    name: 'huge output: a million small objects',
    source: 'export default () => Array.from({ length: 1e6 }, (_, i) => ({ i }))',
    contained: ['invalid_output', 'memory_limit', 'cpu_limit'],
  },
  {
    name: 'huge output: toJSON that grows without end',
    source: 'export default () => ({ toJSON() { let s = "y"; for (;;) s += s; } })',
    contained: ['invalid_output', 'memory_limit', 'function_error', 'cpu_limit'],
  },
  {
    name: 'recursion: unbounded',
    source: 'export default () => { const f = (n) => f(n + 1) + 1; return f(0); }',
    contained: ['function_error'],
  },
  {
    name: 'recursion: inside a Proxy trap chain',
    source: 'export default () => { const p = new Proxy({}, { get: (t, k) => p[k] }); return p.x; }',
    contained: ['function_error'],
  },
];

export const BUFFERS: Attack[] = [
  ...['SharedArrayBuffer', 'Atomics', 'WebAssembly'].map((name) => ({
    name: `buffers: ${name}`,
    source: `export default () => typeof ${name}.prototype`,
    contained: ['capability_denied'] as const,
  })),
  {
    name: 'buffers: WebAssembly.Memory grow through a saved reference',
    source:
      'export default () => { const W = globalThis["Web" + "Assembly"]; const m = new W.Memory({ initial: 1, maximum: 65536 }); for (;;) m.grow(256); }',
    contained: ['capability_denied'],
  },
  {
    name: 'buffers: one 2 GB ArrayBuffer',
    source: 'export default () => new ArrayBuffer(2 ** 31).byteLength',
    contained: ['memory_limit'],
  },
  {
    name: 'buffers: a resizable ArrayBuffer grown past the budget',
    source:
      'export default () => { const b = new ArrayBuffer(1, { maxByteLength: 2 ** 30 }); b.resize(2 ** 30); return b.byteLength; }',
    contained: ['memory_limit'],
  },
  {
    name: 'buffers: TypedArray slice/map/subarray copies',
    source: `export default () => { const a = new Uint8Array(16 * 2 ** 20); a.constructor = undefined; const keep = [];
      for (let i = 0; i < 20; i++) keep.push(a.slice(0), a.subarray(0).slice()); return keep.length; }`,
    // Whichever budget a loaded machine reaches first cuts it (the copies take CPU too).
    contained: ['memory_limit', 'cpu_limit'],
  },
  {
    name: 'buffers: TypedArray map copies',
    source: `export default () => { const a = new Uint8Array(4 * 2 ** 20); a.constructor = undefined; const keep = [];
      for (let i = 0; i < 20; i++) keep.push(a.map((x) => x)); return keep.length; }`,
    // Whichever budget a loaded machine reaches first cuts it.
    contained: ['memory_limit', 'cpu_limit'],
  },
  {
    name: 'buffers: structuredClone of a large view',
    source:
      'export default () => { const keep = []; const a = new Uint8Array(32 * 2 ** 20); for (let i = 0; i < 20; i++) keep.push(structuredClone(a)); return keep.length; }',
    contained: ['memory_limit', 'function_error'],
  },
  {
    name: 'buffers: TextEncoder on a huge string',
    source:
      'export default () => { const s = "é".repeat(2 ** 26); const keep = []; for (let i = 0; i < 20; i++) keep.push(new TextEncoder().encode(s)); return keep.length; }',
    contained: ['memory_limit', 'function_error'],
  },
  {
    name: 'buffers: the heap (arrays of numbers)',
    source: 'export default () => { const keep = []; for (;;) keep.push(new Array(1e6).fill(1.5)); }',
    contained: ['memory_limit', 'cpu_limit'],
  },
];

/** Loopback and link-local targets, each granted outright: the egress guard must refuse them all. */
export function networkAttacks(port: number): Attack[] {
  const targets: [string, string][] = [
    ['127.0.0.1', `127.0.0.1:${port}`],
    ['::1', `[::1]:${port}`],
    ['localhost', `localhost:${port}`],
    ['169.254.169.254', '169.254.169.254'],
    ['IPv4-mapped IPv6', `[::ffff:127.0.0.1]:${port}`],
    ['decimal 2130706433', `2130706433:${port}`],
    ['octal 0177.0.0.1', `0177.0.0.1:${port}`],
    ['hex 0x7f.1', `0x7f.1:${port}`],
    ['0.0.0.0', `0.0.0.0:${port}`],
  ];
  return targets.map(([what, host]) => {
    const url = `http://${host}/SET/owned/1`;
    const parsed = new URL(url);
    // Grant the spelling the function uses and the one the URL parser makes of it.
    const grantOf = (h: string, p: string) => (p ? `${h}:${p}` : h);
    const grants = [
      ...new Set([grantOf(host.replace(/:\d+$/, ''), parsed.port), grantOf(parsed.hostname, parsed.port)]),
    ]
      .map((grant) => grant.replace(/^\[|\](?=:|$)/g, ''))
      .filter((grant) => /^(?:\*\.)?[a-z0-9.-]+(?::\d{1,5})?$/i.test(grant));
    return {
      name: `network: ${what}`,
      source: `export default async () => (await fetch(${JSON.stringify(url)}, { method: 'POST', body: 'x' })).status`,
      grants: { fetch: grants.length > 0 ? grants : ['example.invalid'], env: [] },
      contained: ['capability_denied'],
    };
  });
}

/** A granted fetch with a body far larger than any API call, sent many times at once. */
export const EGRESS_FLOOD: Attack = {
  name: 'network: 200 pending fetches of an 8 MB body each',
  source: `export default async () => { const body = 'b'.repeat(8 * 2 ** 20);
    const calls = []; for (let i = 0; i < 200; i++) calls.push(fetch('http://api.example.invalid/', { method: 'POST', body }).then((r) => r.status, (e) => e.message));
    return (await Promise.all(calls))[0]; }`,
  grants: { fetch: ['api.example.invalid'], env: [] },
  contained: ['ok', 'function_error', 'memory_limit', 'cpu_limit'],
  harmless: ({ data, speech }) => /larger than 1048576 bytes/.test(String(speech ?? data)),
};

export const LOOPS: Attack[] = [
  { name: 'infinite loop: for (;;)', source: 'export default () => { for (;;) {} }', contained: ['cpu_limit'] },
  {
    name: 'infinite loop: in a catch that swallows the timeout',
    source: 'export default () => { for (;;) { try { for (;;) {} } catch {} } }',
    contained: ['cpu_limit'],
  },
  {
    name: 'async exhaustion: an unbounded promise chain',
    source: 'export default () => { const f = () => Promise.resolve().then(f); f(); return new Promise(() => {}); }',
    contained: ['cpu_limit', 'memory_limit'],
  },
  {
    name: 'async exhaustion: recursive async functions',
    source: 'export default async () => { const f = async () => { await null; return f(); }; return f(); }',
    contained: ['cpu_limit', 'memory_limit'],
  },
  {
    name: 'async exhaustion: ten million pending thens',
    source:
      'export default () => { let p = new Promise(() => {}); for (let i = 0; i < 1e7; i++) p.then(() => {}); return p; }',
    contained: ['cpu_limit', 'memory_limit', 'no_result'],
  },
];
