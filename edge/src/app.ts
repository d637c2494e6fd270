import {
  type SessionConfig,
  type SessionConfigInput,
  SessionConfigSchema,
  VenusError,
  type WorkerLink,
} from '@venus/protocol';
import { Hono } from 'hono';
import { requireApiKey } from './auth/api-key-auth.ts';
import { CONSOLE_PAGE } from './console/console-page.ts';
import type { Clock } from './realtime/clock.ts';
import { randomId } from './realtime/ids.ts';
import { RealtimeConnection } from './realtime/realtime-connection.ts';
import type { RealtimeTransport } from './realtime/realtime-transport.ts';

/** Where the realtime WebSocket lives; adapters mount their upgrade handler here. */
export const REALTIME_PATH = '/v1/realtime';

export interface EdgeEnv {
  Variables: { tenant: string };
}

export interface EdgeAppOptions {
  link: WorkerLink;
  /** When non-empty, the realtime route requires one of these keys. */
  apiKeys?: readonly string[];
  defaultConfig?: SessionConfigInput;
  newSessionId?: () => string;
  /** Time and timers for playout estimation (tests pass fakes). */
  clock?: Clock;
  /** Outbound bytes a client may leave unread before it is disconnected (default 8 MiB). */
  maxBufferedBytes?: number;
}

export interface EdgeApp {
  app: Hono<EdgeEnv>;
  /** Binds one accepted client socket to a new worker session and starts it. */
  openRealtime(transport: RealtimeTransport, tenant: string): RealtimeConnection;
}

/**
 * The portable core of the edge gateway: HTTP routes and the realtime session logic, with no
 * knowledge of the runtime's sockets. Each adapter adds the WebSocket upgrade at REALTIME_PATH
 * (after the auth middleware installed here) and feeds the socket into `openRealtime`.
 *
 * @example
 *   const edge = createEdgeApp({ link, apiKeys: ['sk-local'] });
 *   edge.app.get(REALTIME_PATH, upgradeWebSocket((c) => {
 *     let connection: RealtimeConnection | undefined;
 *     return {
 *       onOpen: (_e, ws) => { connection = edge.openRealtime(wrap(ws), c.get('tenant')); },
 *       onMessage: (e) => connection?.handleMessage(e.data),
 *       onClose: (e) => connection?.handleClose(e.code, e.reason),
 *     };
 *   }));
 */
export function createEdgeApp(options: EdgeAppOptions): EdgeApp {
  const config = defaultSessionConfig(options.defaultConfig);
  const newSessionId = options.newSessionId ?? (() => randomId('sess'));
  const app = new Hono<EdgeEnv>();

  app.get('/healthz', (c) => c.json({ ok: true }));
  app.get('/', (c) => c.html(CONSOLE_PAGE));
  app.use(REALTIME_PATH, requireApiKey(options.apiKeys ?? []));
  app.use(REALTIME_PATH, async (c, next) => {
    // One tenant until per-tenant keys exist; the key check above is where a tenant will come from.
    c.set('tenant', 'default');
    await next();
  });

  return {
    app,
    openRealtime(transport, tenant) {
      const connection = new RealtimeConnection({
        link: options.link,
        transport,
        tenant,
        sessionId: newSessionId(),
        config,
        ...(options.clock === undefined ? {} : { clock: options.clock }),
        ...(options.maxBufferedBytes === undefined ? {} : { maxBufferedBytes: options.maxBufferedBytes }),
      });
      connection.start();
      return connection;
    },
  };
}

function defaultSessionConfig(input: SessionConfigInput | undefined): SessionConfig {
  const parsed = SessionConfigSchema.safeParse({ chunkMs: 1000, ...input });
  if (!parsed.success) {
    throw new VenusError('invalid_arguments', `defaultConfig: ${parsed.error.issues[0]?.message ?? 'invalid'}`, {
      cause: parsed.error,
    });
  }
  return parsed.data;
}
