import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import {
  createLogger,
  decodeEdgeToWorkerFrame,
  type EdgeToWorkerFrame,
  encodeRelayFrame,
  HANDOVER_REASON,
  logUnlessTeardown,
  RELAY_CLOSE_CODES,
  RELAY_PATH,
  type WorkerToEdgeFrame,
} from '@venus/protocol';
import { type RawData, WebSocketServer } from 'ws';
import { RelayConnection } from './relay-connection.ts';
import { SessionRoutes } from './session-routes.ts';

const log = createLogger('gpu-worker.relay');

/** The worker side of the relay: a SessionHost, or anything with its two frame methods. */
export interface RelayFrameHost {
  handleFrame(frame: unknown): void;
  onFrame(listener: (frame: WorkerToEdgeFrame) => void): () => void;
  /**
   * Lets go of a session without ending it, answering `closed` with HANDOVER_REASON once its
   * events are stored (SessionHost.handOver). Without it, a drain cannot hand sessions over.
   */
  handOver?(session: string): void;
}

export interface ServeRelayOptions {
  host: RelayFrameHost;
  /** 0 picks a free port. */
  port: number;
  /** Default 127.0.0.1: listening beyond this machine is an explicit choice. */
  hostname?: string;
  /** When set, edges must send `Authorization: Bearer <token>` on the upgrade. */
  token?: string;
  /** Unread bytes per edge connection before it is dropped with 4008. Default 16 MiB. */
  maxBufferedBytes?: number;
  /** Ping period; an edge that misses one pong is cut. Default 10 s. */
  heartbeatMs?: number;
  /** How long sessions of a lost edge connection wait to be reclaimed. Default 15 s. */
  reclaimGraceMs?: number;
  /** Worker output kept per waiting session. Default 2 MiB. */
  maxOrphanBytes?: number;
  /** New sessions beyond this are refused with `model_unavailable`. Default: no limit. */
  maxSessions?: number;
  /** Served at `GET /metrics` (Prometheus text) when given: the worker's VenusMetrics. */
  metrics?: { readonly contentType: string; render(): Promise<string> };
}

export interface RelayStats {
  connections: number;
  /** Edge connections accepted since the relay started. */
  accepted: number;
  sessions: number;
  /** Edge connections dropped for not reading. */
  slowConsumerDrops: number;
  /** Worker frames for sessions no edge owned or waited for (e.g. after the edge closed them). */
  unroutable: number;
  /** Heartbeat pings answered by edges since the relay started. */
  pongs: number;
}

export interface RelayServer {
  /** ws://host:port/relay */
  url: string;
  port: number;
  /** Sessions owned by a connected edge or waiting for one to reclaim them. */
  readonly sessionCount: number;
  stats(): RelayStats;
  /** Refuses new sessions (`model_unavailable`) while live ones carry on and lost ones may be reclaimed. */
  drain(): void;
  /**
   * Drains, and asks the edges to move every session elsewhere (a `handover` frame each, all at
   * once): each edge holds the session's input, answers `close` with HANDOVER_REASON, and the host
   * lets the session go once its events are stored. `sessionCount` falls to 0 as they leave.
   */
  handOverAll(): void;
  /** At the drain's deadline: lets go of every session left (`closed` with HANDOVER_REASON) without waiting for its edge. */
  releaseAll(): void;
  /** Closes every edge connection (1001) and ends every session on the host. */
  close(): Promise<void>;
}

/** Largest relay message accepted: an audio frame is at most 480 kB of pcm. */
const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * Serves the edge <-> worker relay over WebSocket at RELAY_PATH: one msgpack relay frame per binary
 * message, in both directions. Each edge connection owns the sessions it opens (frames for another
 * connection's sessions are answered `wrong_session`), output waits for a reconnecting edge for a
 * grace period, unread output is capped per connection, and a ping heartbeat cuts dead peers.
 * `GET /healthz` answers with the stats, `GET /metrics` with the worker's series (when given).
 *
 * @example
 *   const relay = await serveRelay({ host: sessionHost, port: 8081, hostname: '0.0.0.0', token });
 *   console.log(`edges connect to ${relay.url}`);
 */
export async function serveRelay(options: ServeRelayOptions): Promise<RelayServer> {
  const { host } = options;
  const maxBufferedBytes = options.maxBufferedBytes ?? 16 * 1024 * 1024;
  const hostname = options.hostname ?? '127.0.0.1';
  const connections = new Set<RelayConnection>();
  let slowConsumerDrops = 0;
  let accepted = 0;
  let pongs = 0;
  let closed = false;
  let draining = false;
  /**
   * Sessions let go of for a handover: input for them that was already on its way is dropped
   * without an error (the edge queues the rest for the next worker). At most the sessions this
   * worker held when it drained; the process exits after its drain.
   */
  const handedOver = new Set<string>();
  const handOver = (session: string): void => {
    if (handedOver.has(session)) return;
    handedOver.add(session);
    if (host.handOver === undefined) host.handleFrame({ kind: 'close', session, reason: 'worker draining' });
    else host.handOver(session);
  };

  const routes = new SessionRoutes<RelayConnection>({
    graceMs: options.reclaimGraceMs ?? 15_000,
    maxOrphanBytes: options.maxOrphanBytes ?? 2 * 1024 * 1024,
    endSession: (session, reason) => host.handleFrame({ kind: 'close', session, reason }),
  });
  const stats = (): RelayStats => ({
    connections: connections.size,
    accepted,
    sessions: routes.size,
    slowConsumerDrops,
    unroutable: routes.unroutable,
    pongs,
  });

  const unsubscribe = host.onFrame((frame) => {
    routes.deliver(frame.session, encodeRelayFrame(frame));
    if (frame.kind === 'closed') routes.release(frame.session);
  });

  const refuse = (connection: RelayConnection, frame: EdgeToWorkerFrame, code: 'wrong_session', message: string) =>
    connection.sendFrame({ kind: 'error', session: frame.session, code, message });

  const onFrame = (connection: RelayConnection, frame: EdgeToWorkerFrame): void => {
    if (frame.kind === 'open') {
      const claim = routes.claim(frame.session, connection);
      if (claim === 'conflict') {
        refuse(connection, frame, 'wrong_session', `session ${frame.session} belongs to another edge connection`);
        return;
      }
      if (claim === 'reclaimed') return;
      const full = options.maxSessions !== undefined && routes.size > options.maxSessions;
      if (claim === 'new' && (draining || full)) {
        routes.release(frame.session);
        const message = draining ? 'this worker is draining' : `this worker is full (${options.maxSessions} sessions)`;
        connection.sendFrame({ kind: 'error', session: frame.session, code: 'model_unavailable', message });
        connection.sendFrame({ kind: 'closed', session: frame.session, reason: 'model_unavailable' });
        return;
      }
      host.handleFrame(frame);
      return;
    }
    if (handedOver.has(frame.session)) return;
    if (frame.kind === 'close' && frame.reason === HANDOVER_REASON && draining) {
      // The edge holds the session's input from here on: let it go once its events are stored.
      if (routes.owner(frame.session) === connection) handOver(frame.session);
      return;
    }
    if (routes.owner(frame.session) !== connection) {
      refuse(connection, frame, 'wrong_session', `session ${frame.session} is not open on this relay connection`);
      return;
    }
    host.handleFrame(frame);
    // The edge has let go of the session; the host's last frames for it have nowhere to go.
    if (frame.kind === 'close') routes.release(frame.session);
  };

  const onMessage = (connection: RelayConnection, data: RawData, isBinary: boolean): void => {
    // Its sessions already wait for a reclaim; a closing connection must not take them back.
    if (connection.closing) return;
    const bytes = isBinary ? toBytes(data) : undefined;
    const decoded = bytes === undefined ? undefined : decodeEdgeToWorkerFrame(bytes);
    if (decoded?.ok) {
      onFrame(connection, decoded.frame);
      return;
    }
    if (decoded?.session !== undefined) {
      connection.sendFrame({
        kind: 'error',
        session: decoded.session,
        code: 'invalid_event',
        message: decoded.error.message,
      });
      return;
    }
    connection.close(RELAY_CLOSE_CODES.undecodable, 'expected binary msgpack relay frames');
  };

  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  wss.on('connection', (socket) => {
    const connection = new RelayConnection(socket, {
      maxBufferedBytes,
      // Output for its sessions waits for a reclaim from the moment it starts closing, not once closed.
      onClosing: (closing, code) => {
        if (code === RELAY_CLOSE_CODES.slowConsumer) slowConsumerDrops += 1;
        if (!closed) routes.orphanAll(closing);
      },
    });
    connections.add(connection);
    accepted += 1;
    socket.on('pong', () => {
      pongs += 1;
    });
    socket.on('message', (data, isBinary) => onMessage(connection, data, isBinary));
    socket.on('error', (error) => {
      logUnlessTeardown(log, error, 'edge relay socket failed');
      connection.close(1011, 'socket error');
    });
    socket.on('close', () => {
      connections.delete(connection);
      if (!closed) routes.orphanAll(connection);
    });
  });

  const server = createServer((request, response) => {
    if (request.method === 'GET' && request.url === '/healthz') {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, ...stats() }));
      return;
    }
    const metrics = options.metrics;
    if (request.method === 'GET' && request.url === '/metrics' && metrics !== undefined) {
      metrics.render().then(
        (text) => response.writeHead(200, { 'content-type': metrics.contentType }).end(text),
        (error: unknown) => response.writeHead(500, { 'content-type': 'text/plain' }).end(String(error)),
      );
      return;
    }
    response.writeHead(404).end();
  });
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = new URL(request.url ?? '/', 'http://relay').pathname;
    if (path !== RELAY_PATH) return rejectUpgrade(socket, 404, 'Not Found');
    if (!hasToken(request, options.token)) return rejectUpgrade(socket, 401, 'Unauthorized');
    wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request));
  });

  const heartbeat = setInterval(() => {
    for (const connection of connections) connection.heartbeat();
  }, options.heartbeatMs ?? 10_000);
  heartbeat.unref();

  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, hostname, () => resolve((server.address() as AddressInfo).port));
  });
  const urlHost = hostname.includes(':') ? `[${hostname}]` : hostname;

  return {
    url: `ws://${urlHost}:${port}${RELAY_PATH}`,
    port,
    get sessionCount() {
      return routes.size;
    },
    stats,
    drain() {
      draining = true;
    },
    handOverAll() {
      draining = true;
      for (const session of routes.sessions()) {
        if (!handedOver.has(session))
          routes.deliver(session, encodeRelayFrame({ kind: 'handover', session, reason: 'draining' }));
      }
    },
    releaseAll() {
      draining = true;
      for (const session of routes.sessions()) handOver(session);
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(heartbeat);
      unsubscribe();
      for (const connection of connections) connection.close(RELAY_CLOSE_CODES.goingAway, 'worker shutting down');
      routes.endAll('relay closed');
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

function toBytes(data: RawData): Uint8Array {
  if (Array.isArray(data)) return Buffer.concat(data);
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  return data;
}

function hasToken(request: IncomingMessage, token: string | undefined): boolean {
  if (token === undefined || token === '') return true;
  const presented = request.headers.authorization?.match(/^Bearer\s+(\S+)\s*$/i)?.[1] ?? '';
  // Compare digests so neither the time taken nor a length check tells how close a guess was.
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(presented), digest(token));
}

function rejectUpgrade(socket: Duplex, status: number, text: string): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}
