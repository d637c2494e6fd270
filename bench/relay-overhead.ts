import { serveEdgeNode } from '@venus/edge';
import { WebSocketWorkerLink } from '../edge/src/relay/index.ts';
import { type BareEchoServer, serveBareEcho } from './support/bare-echo-server.ts';
import { BenchChild, sleep } from './support/child-lines.ts';
import { CpuSampler } from './support/cpu-sampler.ts';
import { inProcessEchoLink } from './support/in-process-echo-link.ts';
import type { LoadClientOptions, StreamResult } from './support/load-client.ts';
import { serveProtocolEcho } from './support/protocol-echo-server.ts';

export interface RelayOverheadOptions {
  /** Concurrent streaming sessions, each sending 50 frames/s. */
  sessions: number;
  warmupS: number;
  measureS: number;
}

/** What one side (the edge path, or the bare baseline) measured at the client. */
export interface ServerSide {
  client: StreamResult;
  /** CPU of this process (the server under test) in the window, % of one core. */
  serverCpuPct: number;
  /** The same as CPU time, µs. */
  serverCpuUs: number;
  /** CPU time per echo the client received in the window, µs (NaN when none came back). */
  cpuPerEchoUs: number;
}

export interface RelayOverheadResult {
  sessions: number;
  baseline: ServerSide;
  edge: ServerSide;
  /** Edge p50/p99 minus the bare server's: what the edge and the relay add. */
  addedP50Ms: number;
  addedP99Ms: number;
  /** The echo worker process's CPU in the window (relay server + echo host), % of one core. */
  workerCpuPct: number;
  /** Edge CPU per stream, % of one core. */
  cpuPerStreamPct: number;
  /** Edge CPU time per echo the clients received in the window, µs. */
  cpuPerEchoUs: number;
  /** Frames the relay link dropped (congestion) and sockets the relay cut as slow consumers. */
  linkDrops: number;
  slowConsumerDrops: number;
  /** Times the relay socket was lost (e.g. cut by the relay's heartbeat while swamped), with close codes. */
  linkDisconnects: string[];
}

/**
 * Added latency of the edge relay under many real-time streams. The same load client (a child
 * process, see support/load-client.ts) first runs against a bare `ws` echo server, then against the
 * real path: `serveEdgeNode` (Hono + ws, base64 and 24 -> 16 kHz conversion) -> WebSocketWorkerLink
 * (msgpack) -> `serveRelay` -> EchoFrameHost, and back through the edge's timeline relay as OpenAI
 * events. The edge and its link run in this process, so its CPU is the edge's; the relay server and
 * the echo host run in a child process (support/echo-worker.ts), as a GPU worker runs on its own
 * machine. Three processes share this machine's cores, so the worker's CPU is reported too.
 *
 * @example
 *   const r = await runRelayOverhead({ sessions: 500, warmupS: 2, measureS: 8 });
 *   console.log(r.addedP99Ms, r.cpuPerStreamPct);
 */
export async function runRelayOverhead(o: RelayOverheadOptions): Promise<RelayOverheadResult> {
  const baseline = await measureServer(serveBareEcho, o);

  const worker = BenchChild.spawn({ entry: 'bench/support/echo-worker.ts', options: {}, fdLimit: 4096 });
  const ready = await worker.next('ready', 60_000);
  let linkDrops = 0;
  const linkDisconnects: string[] = [];
  let closing = false;
  const link = new WebSocketWorkerLink({
    url: String(ready.url),
    onEvent: (event) => {
      if (event.type === 'dropped') linkDrops += 1;
      if (event.type === 'disconnected' && !closing) linkDisconnects.push(`${event.code} ${event.reason}`.trim());
    },
  });
  const edge = await serveEdgeNode({ link, port: 0 });
  let measured: ServerSide;
  let workerCpuUs = 0;
  let slowConsumerDrops = 0;
  try {
    for (let waited = 0; !link.connected; waited += 20) {
      if (waited > 5_000) throw new Error('the relay link did not connect');
      await sleep(20);
    }
    measured = await measure(`${edge.url.replace(/^http/, 'ws')}/v1/realtime`, o);
    const { windowFromEpochMs: from, windowToEpochMs: to } = measured.client;
    worker.command(`cpu ${from} ${to}`);
    workerCpuUs = Number((await worker.next('cpu', 10_000)).us);
    worker.command('stats');
    slowConsumerDrops = Number((await worker.next('stats', 10_000)).slowConsumerDrops);
  } finally {
    closing = true;
    await edge.close();
    await link.close();
    await worker.stop();
  }
  const windowMs = measured.client.windowToEpochMs - measured.client.windowFromEpochMs;

  return {
    sessions: o.sessions,
    baseline,
    edge: measured,
    addedP50Ms: measured.client.p50Ms - baseline.client.p50Ms,
    addedP99Ms: measured.client.p99Ms - baseline.client.p99Ms,
    cpuPerStreamPct: measured.serverCpuPct / Math.max(1, measured.client.opened),
    cpuPerEchoUs: measured.serverCpuUs / Math.max(1, measured.client.echoes),
    workerCpuPct: (workerCpuUs / 1000 / windowMs) * 100,
    linkDrops,
    slowConsumerDrops,
    linkDisconnects,
  };
}

/** The edge's client side alone: the same load, the worker's echo host in the edge's process. */
export interface InProcessEdgeResult {
  sessions: number;
  baseline: ServerSide;
  /** A bare server that does the OpenAI protocol's own work per frame (support/protocol-echo-server.ts). */
  protocolFloor: ServerSide;
  edge: ServerSide;
  /** Edge CPU per echo, µs, less what the link timed as the worker's half (its codec). */
  cpuPerEchoUs: number;
  /** The part of the edge's CPU the link timed as the worker's half, µs per echo. */
  workerHalfUs: number;
}

/**
 * The relay benchmark without the relay socket: `serveEdgeNode` on an in-process link to the echo
 * host (support/in-process-echo-link.ts; frames still go through the msgpack codec both ways), paired
 * with a bare-server run and a protocol-floor run right before it (a bare server that parses each
 * append and answers with its audio as a delta, base64 both ways). Set beside runRelayOverhead it
 * says how much of the edge's CPU per echo is the relay hop (its socket, its second process), how
 * much the OpenAI protocol itself costs any server, and how much the edge's session adds.
 *
 * @example
 *   const r = await runEdgeInProcess({ sessions: 100, warmupS: 2, measureS: 8 });
 *   console.log(r.cpuPerEchoUs / r.baseline.cpuPerEchoUs);
 */
export async function runEdgeInProcess(o: RelayOverheadOptions): Promise<InProcessEdgeResult> {
  const baseline = await measureServer(serveBareEcho, o);
  const protocolFloor = await measureServer(serveProtocolEcho, o);
  const half = { us: 0 };
  const edge = await serveEdgeNode({ link: inProcessEchoLink(half), port: 0 });
  const halfAt = new CpuSampler(() => half.us);
  let measured: ServerSide;
  let halfInWindowUs: number;
  try {
    measured = await measure(`${edge.url.replace(/^http/, 'ws')}/v1/realtime`, o);
    halfInWindowUs = halfAt.between(measured.client.windowFromEpochMs, measured.client.windowToEpochMs);
  } finally {
    halfAt.stop();
    await edge.close();
  }
  const echoes = Math.max(1, measured.client.echoes);
  const workerHalfUs = halfInWindowUs / echoes;
  return {
    sessions: o.sessions,
    baseline,
    protocolFloor,
    edge: measured,
    cpuPerEchoUs: measured.serverCpuUs / echoes - workerHalfUs,
    workerHalfUs,
  };
}

/** The same load against a baseline server (the bare echo, the protocol floor), started and closed around it. */
async function measureServer(serve: () => Promise<BareEchoServer>, o: RelayOverheadOptions): Promise<ServerSide> {
  const server = await serve();
  try {
    return await measure(server.url, o);
  } finally {
    await server.close();
  }
}

/** Runs the load client against `url` and reads this process's CPU over the client's measuring window. */
async function measure(url: string, o: RelayOverheadOptions): Promise<ServerSide> {
  const options: LoadClientOptions = {
    mode: 'stream',
    url,
    sessions: o.sessions,
    warmupS: o.warmupS,
    measureS: o.measureS,
    maxRunS: 120 + o.warmupS + o.measureS,
  };
  const cpu = new CpuSampler();
  const child = BenchChild.spawn({ entry: 'bench/support/load-client.ts', options, fdLimit: o.sessions + 1024 });
  try {
    const connected = await child.next('connected', 90_000);
    if (connected.failed) {
      process.stderr.write(`relay: ${connected.failed} sessions failed to open (${connected.firstError})\n`);
    }
    const result = await child.next('result', (o.warmupS + o.measureS + 30) * 1000);
    if (typeof result.error === 'string') throw new Error(`load client: ${result.error}`);
    const client = result as unknown as StreamResult;
    const cpuUs = cpu.between(client.windowFromEpochMs, client.windowToEpochMs);
    const wallMs = client.windowToEpochMs - client.windowFromEpochMs;
    return {
      client,
      serverCpuPct: (cpuUs / 1000 / wallMs) * 100,
      serverCpuUs: cpuUs,
      cpuPerEchoUs: client.echoes === 0 ? Number.NaN : cpuUs / client.echoes,
    };
  } finally {
    cpu.stop();
    await child.stop();
  }
}
