import { type EdgeToWorkerFrame, VenusError, type WorkerLink } from '@venus/protocol';
import type { Hono } from 'hono';
import { createEdgeApp, type EdgeEnv, REALTIME_PATH } from '../app.ts';
import { randomId } from '../realtime/ids.ts';
import { ADMISSION_HEADER, SESSION_HEADER } from './workers/session-attachment.ts';
import { apiKeysOf, type WorkersEdgeEnv } from './workers/workers-env.ts';

export { RealtimeSession } from './workers/realtime-session.ts';
export type { WorkersEdgeEnv } from './workers/workers-env.ts';

/**
 * The stateless Worker holds no sessions: every realtime upgrade goes to its own RealtimeSession
 * Durable Object, which owns the link to the GPU worker. This link only makes that explicit.
 */
class DurableObjectsOnlyLink implements WorkerLink {
  send(_frame: EdgeToWorkerFrame): void {
    throw new VenusError('internal_error', 'realtime sessions run in the RealtimeSession Durable Object');
  }
  onFrame(): () => void {
    return () => {};
  }
  async close(): Promise<void> {}
}

const apps = new WeakMap<WorkersEdgeEnv, Hono<EdgeEnv>>();

function appFor(env: WorkersEdgeEnv): Hono<EdgeEnv> {
  const cached = apps.get(env);
  if (cached !== undefined) return cached;
  const edge = createEdgeApp({ link: new DurableObjectsOnlyLink(), apiKeys: apiKeysOf(env) });
  edge.app.get(REALTIME_PATH, async (c) => {
    if (c.req.header('upgrade')?.toLowerCase() !== 'websocket') {
      return c.text('Upgrade Required: connect with a WebSocket', 426);
    }
    if (!env.VENUS_WORKERS?.trim()) return c.text('no GPU worker configured (VENUS_WORKERS)', 503);
    const sessionId = randomId('sess');
    const principal = c.get('realtime')?.principal ?? c.get('principal');
    const headers = new Headers(c.req.raw.headers);
    headers.set(SESSION_HEADER, sessionId);
    headers.set(ADMISSION_HEADER, JSON.stringify(principal));
    const stub = env.REALTIME_SESSION.get(env.REALTIME_SESSION.idFromName(sessionId));
    return stub.fetch(new Request(c.req.raw.url, { headers }));
  });
  apps.set(env, edge.app);
  return edge.app;
}

/**
 * The edge on Cloudflare Workers: the portable Hono core (health, console, auth) in the Worker, and
 * each `/v1/realtime` upgrade, once authenticated, handed to a new `RealtimeSession` Durable Object
 * (one per session, named by a fresh session id) that runs the realtime core and relays to a GPU
 * worker from VENUS_WORKERS.
 *
 * @example
 *   // wrangler.toml: main = "edge/src/adapters/workers.ts", and the REALTIME_SESSION binding
 *   // npx wrangler deploy; npx wrangler secret put VENUS_RELAY_TOKEN
 */
export default {
  fetch(request: Request, env: WorkersEdgeEnv): Response | Promise<Response> {
    return appFor(env).fetch(request, env);
  },
};
