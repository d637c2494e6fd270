import { closeTenancy, type NodeEdgeServer, serveEdgeNode, type Tenancy, tenancyFromEnv } from '@venus/edge';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { EchoFrameHost } from '../bench/support/echo-frame-host.ts';
import { WebSocketWorkerLink } from '../edge/src/relay/websocket-worker-link.ts';
import { FleetQuotas } from '../edge/src/tenancy/fleet-quotas.ts';
import { type RelayServer, serveRelay } from '../gpu-worker/src/relay/index.ts';
import { removeRedisKeys, testRedisUrl } from './support/redis.ts';

/**
 * Tenant limits across a fleet: two real edges (each its own tenancy, as two processes would have)
 * share one Redis and one GPU worker relay. A tenant's concurrent sessions and session starts are
 * counted across both, and the slots of an edge that dies lapse with its lease.
 */
const redisUrl = testRedisUrl;

interface Edge {
  server: NodeEdgeServer;
  link: WebSocketWorkerLink;
  tenancy: Tenancy;
}

let relay: RelayServer | undefined;
const edges: Edge[] = [];
const sockets: WebSocket[] = [];
let prefix = '';

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.terminate();
  for (const edge of edges.splice(0)) {
    await edge.server.close();
    await edge.link.close();
    await closeTenancy(edge.tenancy);
  }
  await relay?.close();
  relay = undefined;
  await removeRedisKeys(prefix, redisUrl());
});

async function fleet(limits: object): Promise<[string, string]> {
  prefix = `test:fleet-quotas:${crypto.randomUUID()}:`;
  relay = await serveRelay({ host: new EchoFrameHost(), port: 0 });
  const env = { REDIS_URL: redisUrl(), VENUS_REDIS_PREFIX: prefix, VENUS_TENANT_LIMITS: JSON.stringify(limits) };
  const urls: string[] = [];
  for (let i = 0; i < 2; i++) {
    const link = new WebSocketWorkerLink({ url: relay.url });
    const tenancy = tenancyFromEnv(env);
    const server = await serveEdgeNode({ link, port: 0, tenancy, webrtc: false });
    edges.push({ server, link, tenancy });
    urls.push(`${server.url.replace(/^http/, 'ws')}/v1/realtime`);
  }
  return [urls[0]!, urls[1]!];
}

/** Opens a realtime socket: 'open' once `session.created` arrived, else the refused upgrade's status. */
function connect(url: string): Promise<{ socket: WebSocket; outcome: 'open' | number }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    sockets.push(socket);
    socket.once('message', () => resolve({ socket, outcome: 'open' }));
    socket.once('unexpected-response', (_request, response) => resolve({ socket, outcome: response.statusCode ?? 0 }));
    socket.once('error', reject);
  });
}

async function closed(socket: WebSocket): Promise<void> {
  if (socket.readyState === WebSocket.CLOSED) return;
  await new Promise((resolve) => {
    socket.once('close', resolve);
    socket.close();
  });
}

describe('fleet-wide tenant limits (two edges, one Redis)', () => {
  it('counts concurrent sessions across edges, and frees the slot when a session ends', async () => {
    const [a, b] = await fleet({ default: { maxConcurrentSessions: 2 } });
    expect((await connect(a)).outcome).toBe('open');
    const second = await connect(b);
    expect(second.outcome).toBe('open');
    // Each edge alone has room for one more; the fleet does not.
    expect((await connect(a)).outcome).toBe(429);
    expect((await connect(b)).outcome).toBe(429);
    await closed(second.socket);
    await expect.poll(async () => (await connect(a)).outcome, { timeout: 5_000 }).toBe('open');
  });

  it('counts session starts across edges', async () => {
    const [a, b] = await fleet({ default: { sessions: { perMinute: 1, burst: 2 } } });
    expect((await connect(a)).outcome).toBe('open');
    expect((await connect(b)).outcome).toBe('open');
    expect((await connect(a)).outcome).toBe(429);
    expect((await connect(b)).outcome).toBe(429);
  });

  it("applies a tenant's limits to that tenant only; an admitted session works as usual", async () => {
    const [a] = await fleet({ tenants: { other: { maxConcurrentSessions: 0 } }, default: {} });
    const open = await connect(a);
    expect(open.outcome).toBe('open');
    // `other` may open nothing; the default tenant is unlimited, and its session works.
    const events: string[] = [];
    open.socket.on('message', (data) => events.push(JSON.parse(String(data)).type as string));
    open.socket.send(JSON.stringify({ type: 'input_audio_buffer.commit' }));
    await expect.poll(() => events).toContain('input_audio_buffer.committed');
  });
});

describe('FleetQuotas leases', () => {
  it("lets a dead edge's slots lapse after the lease, and keeps a live edge's", async () => {
    prefix = `test:fleet-lease:${crypto.randomUUID()}:`;
    const limits = { maxConcurrentSessions: 1 };
    const live = new FleetQuotas({ url: redisUrl(), prefix, leaseMs: 300 });
    const dying = new FleetQuotas({ url: redisUrl(), prefix, leaseMs: 300 });
    try {
      expect((await live.reserveSession('acme', 'slot_live', limits)).ok).toBe(true);
      live.bindSession('acme', 'slot_live', 'sess_live');
      expect((await dying.reserveSession('other', 'slot_dying', limits)).ok).toBe(true);
      dying.bindSession('other', 'slot_dying', 'sess_dying');
      await dying.close(); // stops refreshing, releases nothing: as if the process died
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      // The live edge kept refreshing: acme is still full.
      expect(await live.reserveSession('acme', 'slot_2', limits)).toMatchObject({ ok: false });
      // The dead edge's slot lapsed: another edge may open a session for that tenant.
      expect((await live.reserveSession('other', 'slot_3', limits)).ok).toBe(true);
    } finally {
      await live.close();
      await dying.close();
    }
  });

  it('admits on local counts when Redis is unreachable, and says so', async () => {
    const errors: unknown[] = [];
    const fleetQuotas = new FleetQuotas({
      url: 'redis://127.0.0.1:1',
      leaseMs: 300,
      onError: (error) => errors.push(error),
    });
    try {
      const admitted = await fleetQuotas.reserveSession('acme', 'slot', { maxConcurrentSessions: 1 });
      expect(admitted.ok).toBe(true);
      expect(errors.length).toBeGreaterThan(0);
    } finally {
      await fleetQuotas.close();
    }
  });
});
