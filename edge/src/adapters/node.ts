import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { createNodeWebSocket } from '@hono/node-ws';
import type { FunctionsCatalog, SessionConfigInput, WorkerLink } from '@venus/protocol';
import { holdWritesForThisTurn, type VenusMetrics } from '@venus/protocol/node';
import type { Context } from 'hono';
import { createEdgeApp, type EdgeApp, type EdgeEnv, REALTIME_PATH } from '../app.ts';
import type { EdgeAuth } from '../auth/edge-auth.ts';
import { LIVE_PATHS, LiveConnection } from '../live/live-connection.ts';
import type { RealtimeTransport } from '../realtime/realtime-transport.ts';
import { mountTwilioStream } from '../telephony/twilio/twilio-routes.ts';
import type { Tenancy } from '../tenancy/tenancy.ts';
import type { TlsOptions } from '../tls/tls-options.ts';
import { iceAddressFor } from '../webrtc/peer-connection.ts';
import { mountWebRtcRoutes, type WebRtcRoutesOptions } from '../webrtc/webrtc-routes.ts';
import { UpgradeRefusals } from './upgrade-refusals.ts';

export interface ServeEdgeNodeOptions {
  link: WorkerLink;
  /** 0 picks a free port; the chosen one is in the returned url. */
  port: number;
  /** Default 127.0.0.1: exposing the edge beyond this machine is an explicit choice. */
  hostname?: string;
  apiKeys?: readonly string[];
  /** Tenant API keys and client tokens (see EdgeAuth); by default from `apiKeys`. */
  auth?: EdgeAuth;
  /** Per-tenant limits and usage metering. */
  tenancy?: Tenancy;
  defaultConfig?: SessionConfigInput;
  /** Serve https and wss with this key and certificate. */
  tls?: TlsOptions;
  /** Also serve https and wss on a second port (the plain listener stays as it is). */
  secure?: { port: number; tls: TlsOptions };
  /** Outbound bytes a client may leave unread before it is disconnected (default 8 MiB). */
  maxBufferedBytes?: number;
  /** Developers' functions: their REST API is mounted at `/v1/functions`. */
  functions?: FunctionsCatalog;
  /** WebRTC calls at POST /v1/realtime/calls (on by default, ICE on `hostname`); false turns them off. */
  webrtc?: WebRtcRoutesOptions | false;
  /**
   * The process's series: served at `GET /metrics` (unauthenticated, like `/healthz`: keep the port
   * off the public side, docs/observability.md), with live client connections counted by transport.
   */
  metrics?: VenusMetrics;
}

export interface NodeEdgeServer {
  /** http(s)://host:port of the running server. */
  url: string;
  /** https://host:port of the second, TLS listener, when `secure` was given. */
  secureUrl?: string;
  close(): Promise<void>;
}

/**
 * Largest client message accepted. An append carries at most AUDIO.maxAppendBytes (480 kB) of
 * audio, 640 kB as base64; messages a few times that still get a proper `audio_too_large` error,
 * anything bigger is refused by the socket (1009) before it is buffered whole.
 */
const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * Runs the edge on Node: Hono over node:http, WebSockets through `ws`.
 *
 * @example
 *   const server = await serveEdgeNode({ link, port: 8080 });
 *   console.log(`console at ${server.url}/`);
 *   await server.close();
 */
export async function serveEdgeNode(options: ServeEdgeNodeOptions): Promise<NodeEdgeServer> {
  const core = createEdgeApp({
    link: options.link,
    ...(options.apiKeys === undefined ? {} : { apiKeys: options.apiKeys }),
    ...(options.auth === undefined ? {} : { auth: options.auth }),
    ...(options.tenancy === undefined ? {} : { tenancy: options.tenancy }),
    ...(options.defaultConfig === undefined ? {} : { defaultConfig: options.defaultConfig }),
    ...(options.maxBufferedBytes === undefined ? {} : { maxBufferedBytes: options.maxBufferedBytes }),
    ...(options.functions === undefined ? {} : { functions: options.functions }),
  });
  const edge = options.metrics === undefined ? core : countConnections(core, options.metrics);
  const metrics = options.metrics;
  if (metrics !== undefined) {
    edge.app.get('/metrics', async (c) => c.body(await metrics.render(), 200, { 'content-type': metrics.contentType }));
  }
  const refusals = new UpgradeRefusals();
  const { upgradeWebSocket, injectWebSocket, wss } = createNodeWebSocket({ app: refusals.wrapApp(edge.app) });
  // @hono/node-ws builds its server without options; ws reads this at each upgrade.
  wss.options.maxPayload = MAX_MESSAGE_BYTES;

  /** One path's upgrade: each socket becomes what `open` makes of it (a realtime or a Live session). */
  const mountSocket = (path: string, open: (transport: RealtimeTransport, c: UpgradeContext) => SocketSession) => {
    edge.app.get(
      path,
      upgradeWebSocket((c) => {
        let connection: SocketSession | undefined;
        return {
          onOpen(_event, ws) {
            const raw = ws.raw;
            const transport: RealtimeTransport = {
              kind: 'websocket',
              send: (text) => {
                // Several events often go out in one turn (a timeline event and its audio delta): one write.
                if (raw !== undefined) holdWritesForThisTurn(raw);
                ws.send(text);
              },
              close: (code, reason) => ws.close(code, reason),
              bufferedAmount: () => raw?.bufferedAmount ?? 0,
            };
            connection = open(transport, c);
          },
          onMessage(event) {
            connection?.handleMessage(event.data);
          },
          onClose(event) {
            connection?.handleClose(event.code, event.reason);
          },
          onError() {
            connection?.handleClose(1006, 'socket error');
          },
        };
      }),
    );
    edge.app.get(path, (c) => c.text('Upgrade Required: connect with a WebSocket', 426));
  };
  mountSocket(REALTIME_PATH, (transport, c) => edge.openRealtime(transport, c.get('tenant'), c.get('realtime')));
  // GPT-Live clients: the same sessions, in the Live dialect (edge/src/live).
  for (const path of LIVE_PATHS) {
    mountSocket(path, (transport, c) => {
      const open = (inner: RealtimeTransport) => edge.openRealtime(inner, c.get('tenant'), c.get('realtime'));
      return new LiveConnection({ transport, open });
    });
  }
  mountTwilioStream(edge.app, upgradeWebSocket, edge.telephony);

  const hostname = options.hostname ?? '127.0.0.1';
  const webrtc =
    options.webrtc === false
      ? undefined
      : mountWebRtcRoutes(edge.app, edge, { iceAddress: iceAddressFor(hostname), ...options.webrtc });
  const listen = (port: number, tls: TlsOptions | undefined) =>
    new Promise<{ server: ReturnType<typeof serve>; port: number }>((resolve, reject) => {
      const plain = { fetch: edge.app.fetch, port, hostname };
      const onListening = (info: AddressInfo) => resolve({ server, port: info.port });
      const server =
        tls === undefined
          ? serve(plain, onListening)
          : serve(
              { ...plain, createServer: createHttpsServer, serverOptions: { key: tls.key, cert: tls.cert } },
              onListening,
            );
      server.once('error', reject);
    });
  // Both listeners serve the same app and hand upgrades to the same WebSocket server.
  const main = await listen(options.port, options.tls);
  const secure = options.secure === undefined ? undefined : await listen(options.secure.port, options.secure.tls);
  const servers = secure === undefined ? [main.server] : [main.server, secure.server];
  for (const server of servers) injectWebSocket(refusals.wrapServer(server));

  const host = hostname.includes(':') ? `[${hostname}]` : hostname;
  return {
    url: `${options.tls === undefined ? 'http' : 'https'}://${host}:${main.port}`,
    ...(secure === undefined ? {} : { secureUrl: `https://${host}:${secure.port}` }),
    async close() {
      webrtc?.close();
      for (const client of wss.clients) client.close(1001, 'server shutting down');
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await Promise.all(
        servers.map(
          (server) =>
            new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
        ),
      );
    },
  };
}

/** The upgrade request a socket's session is opened from (its tenant and admission). */
type UpgradeContext = Context<EdgeEnv>;

/** What a socket feeds its messages to: a RealtimeConnection or a LiveConnection. */
interface SocketSession {
  handleMessage(data: unknown): void;
  handleClose(code?: number, reason?: string): void;
}

/** The same edge, its every realtime connection (WebSocket, WebRTC, ...) counted while it lives. */
function countConnections(edge: EdgeApp, metrics: VenusMetrics): EdgeApp {
  return {
    ...edge,
    openRealtime(transport, tenant, admission) {
      const connection = edge.openRealtime(transport, tenant, admission);
      if (!connection.closed) metrics.trackConnection(transport.kind ?? 'other', () => connection.closed);
      return connection;
    },
  };
}
