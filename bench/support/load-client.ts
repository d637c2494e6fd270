import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import WebSocket from 'ws';
import {
  APPEND_MESSAGE,
  ECHO_IN_ORDER,
  echoedFrame,
  FRAME_MS,
  isErrorEvent,
  SESSION_UPDATE_MESSAGE,
} from './echo-wire.ts';

/**
 * The relay benchmark's client load generator, run as its own process (`node --import tsx`) so its
 * CPU is not the edge's. It speaks JSON lines on stdout (see BenchChild) and takes one JSON argument:
 *
 * Every socket, once greeted, sends a GA `session.update` (as current OpenAI clients do).
 *
 * - `stream`: opens `sessions` realtime WebSockets, then each sends a 20 ms `input_audio_buffer.append`
 *   every 20 ms, the sessions spread evenly over the period, for `warmupS + measureS`; every echo
 *   (a `venus.timeline` event whose `audioChunkSeq` is the frame's number in its session) gives one
 *   latency sample, send to receive, for frames sent in the measuring window. A client that falls
 *   more than 100 ms behind its schedule skips frames rather than burst, so the achieved frame rate
 *   says when real time was not kept.
 * - `idle`: opens `connections` sockets, waits for each one's first event (`session.created`),
 *   reports, and holds them until it reads `close` (or its stdin ends).
 *
 * It leaves by itself after `maxRunS` whatever happens.
 */
export type LoadClientOptions =
  | { mode: 'stream'; url: string; sessions: number; warmupS: number; measureS: number; maxRunS?: number }
  | { mode: 'idle'; url: string; connections: number; maxRunS?: number };

export interface StreamResult {
  type: 'result';
  sessions: number;
  /** Sessions whose socket opened and greeted. */
  opened: number;
  connectMs: number;
  measureS: number;
  framesSent: number;
  echoes: number;
  /** Frames per second per session sent in the measuring window (real time is 50). */
  sentPerSession: number;
  /** Echoes per second per session received for them. */
  echoedPerSession: number;
  framesSkipped: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
  errors: number;
  unexpectedCloses: number;
  outOfOrder: number;
  /** The client process's own CPU in the window, % of one core. */
  clientCpuPct: number;
  /** The client's event-loop delay p99 in the window. */
  clientLoopP99Ms: number;
  /** The measuring window as wall-clock epoch ms, so the server can read its own CPU over it. */
  windowFromEpochMs: number;
  windowToEpochMs: number;
}

/** How far behind its schedule the sender may fall before it skips frames. */
const MAX_LAG_MS = 100;
const CONNECT_TIMEOUT_MS = 15_000;
const CONNECT_CONCURRENCY = 100;
const DRAIN_MS = 3_000;

const options = JSON.parse(process.argv[2] ?? '{}') as LoadClientOptions;
const emit = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);
const deadline = setTimeout(
  () => {
    process.stderr.write('load client: past its run limit, leaving\n');
    process.exit(3);
  },
  (options.maxRunS ?? 180) * 1000,
);
deadline.unref();

interface Client {
  socket: WebSocket;
  /** performance.now() at each frame's send, by frame number. */
  sentAt: number[];
  echoes: number;
  closed: boolean;
}

/** Opens one socket and resolves once its first event (`session.created`) arrived. */
function connect(url: string, onMessage: (client: Client, data: Buffer) => void, onClose: (client: Client) => void) {
  return new Promise<Client>((resolve, reject) => {
    const socket = new WebSocket(url, { perMessageDeflate: false, handshakeTimeout: CONNECT_TIMEOUT_MS });
    const client: Client = { socket, sentAt: [], echoes: 0, closed: false };
    let greeted = false;
    const timer = setTimeout(() => {
      socket.terminate();
      reject(new Error('no session.created in time'));
    }, CONNECT_TIMEOUT_MS);
    socket.on('message', (data: Buffer) => {
      if (greeted) return onMessage(client, data);
      greeted = true;
      clearTimeout(timer);
      socket.send(SESSION_UPDATE_MESSAGE, { binary: false });
      resolve(client);
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      if (!greeted) reject(error);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      client.closed = true;
      if (greeted) onClose(client);
      else reject(new Error('closed before session.created'));
    });
  });
}

async function connectAll(
  url: string,
  count: number,
  onMessage: (client: Client, data: Buffer) => void,
  onClose: (client: Client) => void,
): Promise<{ clients: Client[]; failed: number; firstError: string | undefined; ms: number }> {
  const started = performance.now();
  const clients: Client[] = [];
  let next = 0;
  let failed = 0;
  let firstError: string | undefined;
  const lane = async () => {
    while (next < count) {
      next += 1;
      try {
        clients.push(await connect(url, onMessage, onClose));
      } catch (error) {
        failed += 1;
        firstError ??= error instanceof Error ? error.message : String(error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONNECT_CONCURRENCY, count) }, lane));
  return { clients, failed, firstError, ms: performance.now() - started };
}

function percentileOf(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function stream(o: Extract<LoadClientOptions, { mode: 'stream' }>): Promise<void> {
  let measureFrom = Number.POSITIVE_INFINITY;
  let measureTo = Number.POSITIVE_INFINITY;
  const samples = new Float64Array(Math.ceil(o.sessions * (1000 / FRAME_MS) * o.measureS * 1.2) + 1024);
  let sampled = 0;
  let errors = 0;
  let unexpectedCloses = 0;
  let outOfOrder = 0;
  let stopping = false;

  const onMessage = (client: Client, data: Buffer) => {
    const numbered = echoedFrame(data);
    const frame = numbered === ECHO_IN_ORDER ? client.echoes : numbered;
    if (frame < 0) {
      if (isErrorEvent(data)) errors += 1;
      return;
    }
    const now = performance.now();
    if (frame !== client.echoes) outOfOrder += 1;
    client.echoes += 1;
    const sentAt = client.sentAt[frame];
    if (sentAt !== undefined && sentAt >= measureFrom && sentAt < measureTo && sampled < samples.length) {
      samples[sampled++] = now - sentAt;
    }
  };
  const onClose = () => {
    if (!stopping) unexpectedCloses += 1;
  };
  const { clients, failed, firstError, ms } = await connectAll(o.url, o.sessions, onMessage, onClose);
  emit({ type: 'connected', opened: clients.length, failed, firstError, ms });
  if (clients.length === 0) {
    emit({ type: 'result', error: firstError ?? 'no session opened' });
    return;
  }

  // Frame k of the whole schedule belongs to client k % n and is due at start + k * slot.
  const n = clients.length;
  const slotMs = FRAME_MS / n;
  const start = performance.now() + 20;
  measureFrom = start + o.warmupS * 1000;
  measureTo = measureFrom + o.measureS * 1000;
  let k = 0;
  let skipped = 0;
  let measuredSent = 0;
  let measuring = false;
  let cpuFrom = process.cpuUsage();
  const loop = monitorEventLoopDelay({ resolution: 1 });

  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      if (!measuring && now >= measureFrom) {
        measuring = true;
        cpuFrom = process.cpuUsage();
        loop.enable();
      }
      if (now >= measureTo) {
        resolve();
        return;
      }
      const behind = Math.floor((now - MAX_LAG_MS - start) / slotMs);
      if (behind > k) {
        skipped += behind - k;
        k = behind;
      }
      while (start + k * slotMs <= now) {
        const client = clients[k % n]!;
        k += 1;
        if (client.closed) continue;
        const at = performance.now();
        client.sentAt.push(at);
        if (at >= measureFrom && at < measureTo) measuredSent += 1;
        client.socket.send(APPEND_MESSAGE, { binary: false });
      }
      setTimeout(tick, 1);
    };
    setTimeout(tick, 1);
  });
  const cpu = process.cpuUsage(cpuFrom);
  loop.disable();

  const drainUntil = performance.now() + DRAIN_MS;
  while (sampled < measuredSent && performance.now() < drainUntil) await new Promise((r) => setTimeout(r, 20));
  stopping = true;

  const sorted = samples.slice(0, sampled).sort();
  const windowS = o.measureS;
  const result: StreamResult = {
    type: 'result',
    sessions: o.sessions,
    opened: n,
    connectMs: ms,
    measureS: windowS,
    framesSent: measuredSent,
    echoes: sampled,
    sentPerSession: measuredSent / n / windowS,
    echoedPerSession: sampled / n / windowS,
    framesSkipped: skipped,
    p50Ms: percentileOf(sorted, 50),
    p90Ms: percentileOf(sorted, 90),
    p99Ms: percentileOf(sorted, 99),
    p999Ms: percentileOf(sorted, 99.9),
    maxMs: sorted.length === 0 ? 0 : sorted[sorted.length - 1]!,
    errors,
    unexpectedCloses,
    outOfOrder,
    clientCpuPct: ((cpu.user + cpu.system) / 1000 / (windowS * 1000)) * 100,
    clientLoopP99Ms: loop.percentile(99) / 1e6,
    windowFromEpochMs: performance.timeOrigin + measureFrom,
    windowToEpochMs: performance.timeOrigin + measureTo,
  };
  emit(result);
  for (const client of clients) client.socket.terminate();
}

async function idle(o: Extract<LoadClientOptions, { mode: 'idle' }>): Promise<void> {
  let closedByPeer = 0;
  let stopping = false;
  const { clients, failed, firstError, ms } = await connectAll(
    o.url,
    o.connections,
    () => {},
    () => {
      if (!stopping) closedByPeer += 1;
    },
  );
  emit({ type: 'ready', opened: clients.length, failed, firstError, ms });
  await new Promise<void>((resolve) => {
    const lines = createInterface({ input: process.stdin });
    lines.on('line', (line) => {
      if (line.trim() === 'close') resolve();
    });
    lines.on('close', resolve);
  });
  stopping = true;
  const closing = clients.map(
    (client) =>
      new Promise<void>((resolve) => {
        if (client.closed) return resolve();
        client.socket.once('close', () => resolve());
        client.socket.close(1000, 'bench done');
      }),
  );
  // A peer that does not finish the close handshake in time is cut.
  await Promise.race([Promise.all(closing), new Promise((r) => setTimeout(r, 5_000))]);
  for (const client of clients) if (!client.closed) client.socket.terminate();
  emit({ type: 'closed', closedByPeer });
}

if (options.mode === 'stream') {
  // The bench process went away: so does its load.
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
  await stream(options);
} else await idle(options);
process.exit(0);
