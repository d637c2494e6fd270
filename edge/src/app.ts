import {
  type FunctionsCatalog,
  type SessionConfig,
  type SessionConfigInput,
  SessionConfigSchema,
  VenusError,
  type WorkerLink,
} from '@venus/protocol';
import { Hono } from 'hono';
import { except } from 'hono/combine';
import { authenticate } from './auth/auth-middleware.ts';
import { mountClientSecretRoutes } from './auth/client-secret-routes.ts';
import { EdgeAuth } from './auth/edge-auth.ts';
import { mountKeyRoutes } from './auth/key-routes.ts';
import type { Principal } from './auth/principal.ts';
import { CONSOLE_PAGE } from './console/console-page.ts';
import { createFunctionsApi, FUNCTIONS_PATH } from './functions-api/functions-router.ts';
import { limitBody, MAX_REQUEST_BYTES } from './http/body-limit.ts';
import { LIVE_PATHS } from './live/live-connection.ts';
import type { Clock } from './realtime/clock.ts';
import { randomId } from './realtime/ids.ts';
import { RealtimeConnection } from './realtime/realtime-connection.ts';
import type { RealtimeTransport } from './realtime/realtime-transport.ts';
import type { EdgeCallDeps } from './telephony/twilio/edge-calls.ts';
import { mountTwilioTwiml, TWILIO_STREAM_PATH } from './telephony/twilio/twilio-routes.ts';
import { createTenancy, meterSession, type Tenancy } from './tenancy/tenancy.ts';
import { admitRealtime, limitRequests } from './tenancy/tenancy-middleware.ts';
import { mountUsageRoutes } from './tenancy/usage-routes.ts';

/** Where the realtime WebSocket lives; adapters mount their upgrade handler here. */
export const REALTIME_PATH = '/v1/realtime';

export interface EdgeEnv {
  Variables: {
    tenant: string;
    /** Who the request acts for (set by the auth middleware on every `/v1/*` route). */
    principal: Principal;
    /** Set on an admitted realtime upgrade: pass it to `openRealtime`. */
    realtime: RealtimeAdmission;
  };
}

/** What the realtime upgrade's checks hand to `openRealtime`: who connects, and their reserved slot. */
export interface RealtimeAdmission {
  principal: Principal;
  ticket?: string;
}

export interface EdgeAppOptions {
  link: WorkerLink;
  /** When non-empty, the realtime route requires one of these keys. */
  apiKeys?: readonly string[];
  /** API keys, client tokens and the key store; by default built from `apiKeys` (open when empty). */
  auth?: EdgeAuth;
  /** Per-tenant rate limits, session quotas and usage metering; by default no limits, usage in memory. */
  tenancy?: Tenancy;
  defaultConfig?: SessionConfigInput;
  newSessionId?: () => string;
  /** Time and timers for playout estimation (tests pass fakes). */
  clock?: Clock;
  /** Outbound bytes a client may leave unread before it is disconnected (default 8 MiB). */
  maxBufferedBytes?: number;
  /** Developer functions: when given, their REST API is mounted at FUNCTIONS_PATH (`/v1/functions`). */
  functions?: FunctionsCatalog;
}

export interface EdgeApp {
  app: Hono<EdgeEnv>;
  auth: EdgeAuth;
  tenancy: Tenancy;
  /**
   * Binds one accepted client socket to a new worker session and starts it. Pass the upgrade's
   * `c.get('realtime')` as `admission`: it carries the session slot and any client-token settings.
   */
  openRealtime(transport: RealtimeTransport, tenant: string, admission?: RealtimeAdmission): RealtimeConnection;
  /** What a telephony transport opens its calls with (the Twilio stream, mounted by the Node adapter). */
  telephony: EdgeCallDeps;
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
 *       onOpen: (_e, ws) => { connection = edge.openRealtime(wrap(ws), c.get('tenant'), c.get('realtime')); },
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
  const auth = options.auth ?? new EdgeAuth({ apiKeys: options.apiKeys ?? [] });
  const tenancy = options.tenancy ?? createTenancy();
  // Twilio opens its Media Streams socket without a credential: the signed token in its `start` is checked instead.
  app.use('/v1/*', except(TWILIO_STREAM_PATH, authenticate(auth), limitRequests(tenancy)));
  app.use(REALTIME_PATH, admitRealtime(tenancy));
  for (const path of LIVE_PATHS) app.use(path, admitRealtime(tenancy));
  // Every body is streamed through a byte limit, routes mounted later (WebRTC, functions) included:
  // after authentication, so an anonymous caller cannot make the edge hold even that much.
  app.use('*', limitBody(MAX_REQUEST_BYTES));
  mountKeyRoutes(app, auth);
  mountClientSecretRoutes(app, auth, config);
  mountUsageRoutes(app, tenancy);
  mountTwilioTwiml(app, auth);
  if (options.functions) app.route(FUNCTIONS_PATH, createFunctionsApi({ catalog: options.functions }));

  return {
    app,
    auth,
    tenancy,
    telephony: {
      link: options.link,
      config,
      tenancy,
      auth,
      ...(options.clock === undefined ? {} : { clock: options.clock }),
    },
    openRealtime(transport, tenant, admission) {
      const sessionId = newSessionId();
      let forgetKey: (() => void) | undefined;
      const hooks = meterSession(tenancy, tenant, sessionId, () => forgetKey?.());
      const connection = new RealtimeConnection({
        link: options.link,
        transport,
        tenant,
        sessionId,
        config,
        hooks,
        ...(admission?.principal.session === undefined ? {} : { initialSession: admission.principal.session }),
        ...(options.clock === undefined ? {} : { clock: options.clock }),
        ...(options.maxBufferedBytes === undefined ? {} : { maxBufferedBytes: options.maxBufferedBytes }),
      });
      const ticket = admission?.ticket;
      const opened = tenancy.quotas.openSession(tenant, sessionId, ticket);
      if (ticket !== undefined) {
        if (opened.ok) tenancy.fleet?.bindSession(tenant, ticket, sessionId);
        else tenancy.fleet?.releaseReservation(tenant, ticket);
      }
      if (!opened.ok) {
        connection.refuse({ code: 'rate_limited', message: opened.message });
        return connection;
      }
      tenancy.meter.add(tenant, { sessions: 1 });
      connection.start();
      const keyId = admission?.principal.keyId;
      if (keyId !== undefined && !connection.closed) {
        forgetKey = auth.sessions.add(keyId, {
          get closed() {
            return connection.closed;
          },
          end: (message) => connection.end({ code: 'unauthorized', message: `${message}: the session ends` }),
        });
      }
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
