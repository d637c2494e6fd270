import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fleetKeys, type SessionConfig, type WorkerToEdgeFrame } from '@venus/protocol';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { FleetWorkerLink, RedisPlacement, StaticPlacement } from '../edge/src/fleet/index.ts';
import { WebSocketWorkerLink } from '../edge/src/relay/index.ts';
import { FleetMember } from '../gpu-worker/src/fleet/index.ts';
import { serveRelay } from '../gpu-worker/src/relay/index.ts';
import { FakeFrameHost } from './fixtures/fake-frame-host.ts';
import { removeRedisKeys } from './support/redis.ts';
import { until } from './support/until.ts';

const redisUrl = () => {
  const url = process.env.REDIS_URL;
  if (!url) throw new Error('REDIS_URL is not set: the global setup in test/setup/redis-server.ts provides it');
  return url;
};

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A fresh key prefix, removed after the test. */
function testPrefix(): string {
  const prefix = `t:${randomUUID()}:`;
  cleanups.push(() => removeRedisKeys(prefix, redisUrl()));
  return prefix;
}

function member(prefix: string, id: string, options: { maxSessions: number; sessions: number; ttlMs?: number }) {
  const m = new FleetMember({
    redisUrl: redisUrl(),
    prefix,
    id,
    url: `ws://${id}.test:8081/relay`,
    maxSessions: options.maxSessions,
    sessions: () => options.sessions,
    ...(options.ttlMs === undefined ? {} : { ttlMs: options.ttlMs }),
  });
  cleanups.push(() => m.leave());
  return m;
}

function placement(prefix: string): RedisPlacement {
  const p = new RedisPlacement({ url: redisUrl(), prefix });
  cleanups.push(() => p.close());
  return p;
}

describe('fleet registry on Redis', () => {
  it('places on the live, non-draining worker with room, skipping draining and dead ones', async () => {
    const prefix = testPrefix();
    const live = member(prefix, 'live', { maxSessions: 2, sessions: 1 });
    const draining = member(prefix, 'draining', { maxSessions: 8, sessions: 0 });
    const dead = member(prefix, 'dead', { maxSessions: 8, sessions: 0, ttlMs: 100 });
    await Promise.all([live.start(), draining.start(), dead.heartbeat()]);
    await draining.drain();
    // The dead worker stops beating; its entry expires with its TTL (a wait for that, not a sleep).
    const admin = new Redis(redisUrl());
    cleanups.push(() => admin.quit());
    const keys = fleetKeys(prefix);
    let deadGone = false;
    await until(
      "the dead worker's entry to expire",
      () => deadGone,
      30_000,
      async () => {
        deadGone = (await admin.exists(keys.worker('dead'))) === 0;
      },
    );

    const p = placement(prefix);
    expect(await p.place('s1')).toEqual({ id: 'live', url: 'ws://live.test:8081/relay' });
    // The placement reserved the last slot on `live`: nothing has room now.
    await expect(p.place('s2')).rejects.toMatchObject({ code: 'model_unavailable' });

    expect((await admin.smembers(keys.workers)).sort()).toEqual(['draining', 'live']);
    expect(await admin.hget(keys.worker('live'), 'sessions')).toBe('2');

    // The next heartbeat reports what the worker really hosts.
    await live.heartbeat();
    expect(await admin.hget(keys.worker('live'), 'sessions')).toBe('1');
  });

  it('prefers the least loaded worker', async () => {
    const prefix = testPrefix();
    await member(prefix, 'busy', { maxSessions: 4, sessions: 3 }).heartbeat();
    await member(prefix, 'quiet', { maxSessions: 10, sessions: 2 }).heartbeat();
    const p = placement(prefix);
    expect((await p.place('s1')).id).toBe('quiet');
    expect((await p.place('s2')).id).toBe('quiet');
  });

  it('a worker that leaves is no longer placed on', async () => {
    const prefix = testPrefix();
    const only = member(prefix, 'only', { maxSessions: 4, sessions: 0 });
    await only.start();
    const p = placement(prefix);
    expect((await p.place('s1')).id).toBe('only');
    await only.leave();
    await expect(p.place('s2')).rejects.toMatchObject({ code: 'model_unavailable' });
  });
});

describe('static worker list', () => {
  it('spreads sessions over the list by this edge’s own counts, without Redis', async () => {
    const p = StaticPlacement.fromList('ws://a:8081/relay, ws://b:8081/relay');
    expect((await p.place('s1')).url).toBe('ws://a:8081/relay');
    expect((await p.place('s2')).url).toBe('ws://b:8081/relay');
    expect((await p.place('s3')).url).toBe('ws://a:8081/relay');
    p.release('s1');
    p.release('s3');
    expect((await p.place('s4')).url).toBe('ws://a:8081/relay');
    expect(() => StaticPlacement.fromList('http://a:8081/relay')).toThrow(/not a ws/);
  });
});

describe('FleetWorkerLink', () => {
  const config: SessionConfig = { chunkMs: 160, deliveryPolicy: 'when_idle', voice: 'en-us' };

  it('sends each session to its placed worker over real relays, registered in Redis', async () => {
    const prefix = testPrefix();
    const hosts = [new FakeFrameHost(), new FakeFrameHost()];
    const relays = await Promise.all(hosts.map((host) => serveRelay({ host, port: 0 })));
    cleanups.push(() => Promise.all(relays.map((r) => r.close())));
    const members = relays.map(
      (relay, i) =>
        new FleetMember({
          redisUrl: redisUrl(),
          prefix,
          id: `gpu-${i}`,
          url: relay.url,
          maxSessions: 1,
          sessions: () => relay.sessionCount,
        }),
    );
    cleanups.push(() => Promise.all(members.map((m) => m.leave())));
    await Promise.all(members.map((m) => m.start()));

    const link = new FleetWorkerLink({
      placement: new RedisPlacement({ url: redisUrl(), prefix }),
      connect: (worker) => new WebSocketWorkerLink({ url: worker.url }),
    });
    cleanups.push(() => link.close());
    const received: WorkerToEdgeFrame[] = [];
    for (const session of ['s1', 's2', 's3']) {
      link.onFrame(session, (frame) => received.push(frame));
      link.send({ kind: 'open', session, tenant: 'default', config });
      link.send({ kind: 'text', session, itemId: `i-${session}`, text: `hi ${session}` });
    }
    await until('four frames back', () => received.length >= 4);

    // Two workers with room for one session each: s1 and s2 land on different ones, s3 is refused.
    expect(new Set([link.workerOf('s1'), link.workerOf('s2')])).toEqual(new Set(relays.map((r) => r.url)));
    expect(hosts.map((h) => h.frames.length)).toEqual([2, 2]);
    expect(
      received
        .filter((f) => f.kind === 'timeline')
        .map((f) => f.session)
        .sort(),
    ).toEqual(['s1', 's2']);
    expect(received.filter((f) => f.session === 's3')).toEqual([
      expect.objectContaining({ kind: 'error', code: 'model_unavailable' }),
      expect.objectContaining({ kind: 'closed' }),
    ]);
  });
});

describe('edge process', () => {
  it('serves clients and relays them to the workers of VENUS_WORKERS, and stops on SIGTERM', async () => {
    const host = new FakeFrameHost();
    const relay = await serveRelay({ host, port: 0, token: 'tok' });
    cleanups.push(() => relay.close());
    const child = spawn(process.execPath, ['--import', 'tsx', 'edge/src/edge-main.ts'], {
      env: {
        ...process.env,
        PORT: '0',
        HOST: '127.0.0.1',
        VENUS_WORKERS: relay.url,
        VENUS_RELAY_TOKEN: 'tok',
        REDIS_URL: '',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    cleanups.push(() => child.kill('SIGKILL'));
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += String(chunk);
        const match = out.match(/edge ready: (ws:\/\/\S+)/);
        if (match?.[1]) resolve(match[1]);
      });
      child.once('exit', (code) => reject(new Error(`edge exited with ${code}: ${out}`)));
    });

    const client = new WebSocket(url);
    client.on('error', () => {});
    const events: { type: string; session?: { id: string } }[] = [];
    client.on('message', (data) => events.push(JSON.parse(String(data))));
    await until('session.created', () => events.some((e) => e.type === 'session.created'));
    const sessionId = events.find((e) => e.type === 'session.created')?.session?.id ?? '';
    client.send(
      JSON.stringify({
        type: 'conversation.item.create',
        item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'over the relay' }] },
      }),
    );
    await until('open and text at the worker', () => host.kinds(sessionId).length >= 2);
    expect(host.kinds(sessionId)).toEqual(['open', 'text:over the relay']);
    client.close();
    await until('close at the worker', () => host.kinds(sessionId).includes('close'));
    expect(host.kinds(sessionId)).toContain('close');

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
