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
    // A wait for the release to reach Redis, not a timing bound (generous for a busy machine).
    await expect.poll(async () => (await connect(a)).outcome, { timeout: 30_000, interval: 100 }).toBe('open');
  });

  it('counts session starts across edges', async () => {
    // No refill (perMinute 0): the burst of two is all there is, however slow the machine; refill
    // on the clock is checked with a fake clock below.
    const [a, b] = await fleet({ default: { sessions: { perMinute: 0, burst: 2 } } });
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

/**
 * Leases and buckets on a FAKE clock (the `now` option) instead of Redis's: time moves only when
 * the test steps it, so a busy machine cannot make a lease lapse or a bucket refill early or late.
 * (Redis still expires the keys themselves on its own clock, after minutes here: longer than a test.)
 */
describe('FleetQuotas leases', () => {
  const quotas: FleetQuotas[] = [];
  afterEach(async () => {
    for (const q of quotas.splice(0)) await q.close();
  });
  function fakeClockQuotas(clock: { now: number }, options: { leaseMs?: number; reservationMs?: number } = {}) {
    const q = new FleetQuotas({ url: redisUrl(), prefix, leaseMs: 30_000, ...options, now: () => clock.now });
    quotas.push(q);
    return q;
  }

  it("lets a dead edge's slots lapse after the lease, and keeps a live edge's", async () => {
    prefix = `test:fleet-lease:${crypto.randomUUID()}:`;
    const clock = { now: 1_000_000 };
    const limits = { maxConcurrentSessions: 1 };
    const live = fakeClockQuotas(clock);
    const dying = fakeClockQuotas(clock);
    expect((await live.reserveSession('acme', 'slot_live', limits)).ok).toBe(true);
    live.bindSession('acme', 'slot_live', 'sess_live');
    expect((await dying.reserveSession('other', 'slot_dying', limits)).ok).toBe(true);
    dying.bindSession('other', 'slot_dying', 'sess_dying'); // both leases run to 1_030_000
    await dying.close(); // stops refreshing, releases nothing: as if the process died
    clock.now += 20_000;
    await live.refreshLeases(); // the live edge's lease now runs to 1_050_000
    clock.now += 20_000; // 1_040_000: past the dead edge's lease, inside the live one's
    // The live edge kept refreshing: acme is still full.
    expect(await live.reserveSession('acme', 'slot_2', limits)).toMatchObject({ ok: false });
    // The dead edge's slot lapsed: another edge may open a session for that tenant.
    expect((await live.reserveSession('other', 'slot_3', limits)).ok).toBe(true);
  });

  it('gives back a reserved slot whose socket never opened once the reservation time has passed', async () => {
    prefix = `test:fleet-lease:${crypto.randomUUID()}:`;
    const clock = { now: 1_000_000 };
    const limits = { maxConcurrentSessions: 1 };
    const q = fakeClockQuotas(clock, { reservationMs: 15_000 });
    expect((await q.reserveSession('acme', 'slot_1', limits)).ok).toBe(true);
    clock.now += 14_999;
    expect(await q.reserveSession('acme', 'slot_2', limits)).toMatchObject({ ok: false, retryAfterMs: 5000 });
    clock.now += 1;
    expect((await q.reserveSession('acme', 'slot_2', limits)).ok).toBe(true);
  });

  it('refills the fleet-wide session-start bucket on its clock, and says when to retry', async () => {
    prefix = `test:fleet-lease:${crypto.randomUUID()}:`;
    const clock = { now: 1_000_000 };
    const limits = { sessions: { perMinute: 1, burst: 1 } };
    const q = fakeClockQuotas(clock);
    expect((await q.reserveSession('acme', 'slot_1', limits)).ok).toBe(true);
    expect(await q.reserveSession('acme', 'slot_2', limits)).toMatchObject({ ok: false, retryAfterMs: 60_000 });
    clock.now += 30_000; // half a token back
    expect(await q.reserveSession('acme', 'slot_2', limits)).toMatchObject({ ok: false, retryAfterMs: 30_000 });
    clock.now += 30_000;
    expect((await q.reserveSession('acme', 'slot_2', limits)).ok).toBe(true);
    expect((await q.reserveSession('acme', 'slot_3', limits)).ok).toBe(false);
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
