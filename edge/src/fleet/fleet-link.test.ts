import {
  type EdgeToWorkerFrame,
  HANDOVER_REASON,
  SessionConfigSchema,
  VenusError,
  type WorkerToEdgeFrame,
} from '@venus/protocol';
import { describe, expect, it } from 'vitest';
import type { RelayLinkEvent } from '../relay/relay-link.ts';
import { FakeWorkerLink } from '../testing/fake-worker-link.ts';
import { type FailoverEvent, FleetWorkerLink } from './fleet-link.ts';
import { StaticPlacement } from './static-placement.ts';

const config = SessionConfigSchema.parse({ chunkMs: 160 });
const open = (session: string): EdgeToWorkerFrame => ({ kind: 'open', session, tenant: 't1', config });
const audio = (session: string, byte: number): EdgeToWorkerFrame => ({
  kind: 'audio',
  session,
  pcm16k: new Uint8Array([byte, 0]),
});

/** A fleet of two FAKE workers (FakeWorkerLink each) behind a static placement. */
function fleet() {
  const links = new Map<string, FakeWorkerLink>();
  const relayEvents = new Map<string, (event: RelayLinkEvent) => void>();
  const failovers: FailoverEvent[] = [];
  const link = new FleetWorkerLink({
    placement: new StaticPlacement([
      { id: 'w1', url: 'ws://w1/relay' },
      { id: 'w2', url: 'ws://w2/relay' },
    ]),
    connect: (endpoint, onEvent) => {
      const fake = new FakeWorkerLink();
      links.set(endpoint.id, fake);
      relayEvents.set(endpoint.id, onEvent);
      return fake;
    },
    // Long enough that no test here sees the grace run out: a move it sees is not the timer's.
    failoverGraceMs: 3_600_000,
    onFailover: (event) => failovers.push(event),
  });
  return { link, links, relayEvents, failovers };
}

async function placed(links: Map<string, FakeWorkerLink>, id: string): Promise<FakeWorkerLink> {
  for (;;) {
    const found = links.get(id);
    if (found !== undefined) {
      await found.sent('open');
      return found;
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('FleetWorkerLink handover (drain)', () => {
  it('holds input from the handover on, closes the session on the old worker, and moves it once released', async () => {
    const { link, links, failovers } = fleet();
    const seen: WorkerToEdgeFrame[] = [];
    link.onFrame('s1', (frame) => seen.push(frame));
    link.send(open('s1'));
    const w1 = await placed(links, 'w1');
    link.send(audio('s1', 1));
    expect(w1.framesOf('audio')).toHaveLength(1);

    w1.push({ kind: 'handover', session: 's1', reason: 'draining' });
    // The old worker's last frame for it is the handover close; later input waits on the edge.
    expect(w1.frames.at(-1)).toEqual({ kind: 'close', session: 's1', reason: HANDOVER_REASON });
    link.send(audio('s1', 2));
    link.send(audio('s1', 3));
    expect(w1.framesOf('audio')).toHaveLength(1);
    // Timeline frames the old worker still sends reach the client; its handover `closed` does not.
    w1.pushTimeline('s1', { stream: 'system', type: 'deadline.missed', data: { lateMs: 1 } });
    w1.push({ kind: 'closed', session: 's1', reason: HANDOVER_REASON });
    expect(seen.map((f) => f.kind)).toEqual(['timeline', 'handover']);
    expect(seen[1]).toEqual({ kind: 'handover', session: 's1', reason: 'draining' });
    expect(failovers).toEqual([{ session: 's1', from: 'w1', reason: 'drain' }]);

    const w2 = await placed(links, 'w2');
    // On the new worker: the open first, then the held input in order.
    expect(w2.frames.map((f) => f.kind)).toEqual(['open', 'audio', 'audio']);
    expect(w2.framesOf('audio').map((f) => f.pcm16k[0])).toEqual([2, 3]);
    // The drained worker's link is closed once its last session left; the session goes on on w2.
    expect(w1.closed).toBe(true);
    link.send(audio('s1', 4));
    expect(w2.framesOf('audio')).toHaveLength(3);
    expect(link.workerOf('s1')).toBe('ws://w2/relay');
    await link.close();
  });

  it('moves a session the worker let go of at its deadline without having been asked', async () => {
    const { link, links, failovers } = fleet();
    const seen: WorkerToEdgeFrame[] = [];
    link.onFrame('s1', (frame) => seen.push(frame));
    link.send(open('s1'));
    const w1 = await placed(links, 'w1');
    w1.push({ kind: 'closed', session: 's1', reason: HANDOVER_REASON });
    const w2 = await placed(links, 'w2');
    expect(w2.framesOf('open')).toHaveLength(1);
    expect(seen).toEqual([{ kind: 'handover', session: 's1', reason: 'draining' }]);
    expect(failovers.map((e) => e.reason)).toEqual(['drain']);
    await link.close();
  });

  it('a client close while the session is moving follows it to the new worker, after its open', async () => {
    const { link, links } = fleet();
    link.onFrame('s1', () => {});
    link.send(open('s1'));
    const w1 = await placed(links, 'w1');
    w1.push({ kind: 'handover', session: 's1', reason: 'draining' });
    link.send({ kind: 'close', session: 's1', reason: 'client_closed' });
    expect(w1.framesOf('close')).toEqual([{ kind: 'close', session: 's1', reason: HANDOVER_REASON }]);
    w1.push({ kind: 'closed', session: 's1', reason: HANDOVER_REASON });
    const w2 = await placed(links, 'w2');
    expect(w2.frames.map((f) => f.kind)).toEqual(['open', 'close']);
    await link.close();
  });

  it('an ordinary closed ends the session on the edge, without a move', async () => {
    const { link, links, failovers } = fleet();
    const seen: WorkerToEdgeFrame[] = [];
    link.onFrame('s1', (frame) => seen.push(frame));
    link.send(open('s1'));
    const w1 = await placed(links, 'w1');
    w1.push({ kind: 'closed', session: 's1', reason: 'worker_shutdown' });
    expect(seen).toEqual([{ kind: 'closed', session: 's1', reason: 'worker_shutdown' }]);
    expect(failovers).toEqual([]);
    expect(links.has('w2')).toBe(false);
    await link.close();
  });
});

describe('FleetWorkerLink failover (worker lost)', () => {
  const refused = () =>
    new VenusError('model_unavailable', 'relay ws://w1/relay: connect ECONNREFUSED', {
      cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
    });

  it('moves the sessions of a worker whose reconnect is refused outright, without waiting for the grace', async () => {
    const { link, links, relayEvents, failovers } = fleet();
    link.send(open('s1'));
    await placed(links, 'w1');
    relayEvents.get('w1')!({ type: 'disconnected', code: 1006, reason: '' });
    link.send(audio('s1', 7));
    expect(failovers).toEqual([]);
    relayEvents.get('w1')!({ type: 'connect_failed', error: refused(), retryInMs: 100 });
    expect(failovers).toEqual([{ session: 's1', from: 'w1', reason: 'worker_lost' }]);
    const w2 = await placed(links, 'w2');
    // The open goes first; what the client sent while the worker was away follows it.
    await w2.sent('audio');
    expect(w2.frames.map((f) => f.kind)).toEqual(['open', 'audio']);
    await link.close();
  });

  it('keeps waiting out the grace when the reconnect fails some other way (a timeout, a refused upgrade)', async () => {
    const { link, links, relayEvents, failovers } = fleet();
    link.send(open('s1'));
    await placed(links, 'w1');
    relayEvents.get('w1')!({ type: 'disconnected', code: 1006, reason: '' });
    relayEvents.get('w1')!({
      type: 'connect_failed',
      error: new VenusError('model_unavailable', 'relay ws://w1/relay: Opening handshake has timed out'),
      retryInMs: 200,
    });
    relayEvents.get('w1')!({
      type: 'connect_failed',
      error: new VenusError('model_unavailable', 'relay upgrade to ws://w1/relay refused: HTTP 503'),
      retryInMs: 400,
    });
    expect(failovers).toEqual([]);
    expect(links.has('w2')).toBe(false);
    await link.close();
  });
});

/**
 * A FAKE fleet registry: a static placement whose `registered` answers from a set the test edits
 * (or rejects, as an unreachable Redis would), with a clock the test moves.
 */
function registryFleet() {
  const links = new Map<string, FakeWorkerLink>();
  const failovers: FailoverEvent[] = [];
  const state = { live: new Set(['w1', 'w2']), unreadable: false, nowMs: 0 };
  const placement = Object.assign(
    new StaticPlacement([
      { id: 'w1', url: 'ws://w1/relay' },
      { id: 'w2', url: 'ws://w2/relay' },
    ]),
    {
      registered: async (ids: readonly string[]): Promise<ReadonlySet<string>> => {
        if (state.unreadable) throw new Error('connect ECONNREFUSED (fake registry)');
        return new Set(ids.filter((id) => state.live.has(id)));
      },
    },
  );
  const link = new FleetWorkerLink({
    placement,
    connect: (endpoint) => {
      const fake = new FakeWorkerLink();
      links.set(endpoint.id, fake);
      return fake;
    },
    failoverGraceMs: 3_600_000,
    registryCheckMs: 0,
    registryLossMs: 6_000,
    now: () => state.nowMs,
    onFailover: (event) => failovers.push(event),
  });
  return { link, links, failovers, state };
}

describe('FleetWorkerLink failover (registration expired, relay still up)', () => {
  it('moves the sessions of a worker whose registration stayed gone past the loss window', async () => {
    const { link, links, failovers, state } = registryFleet();
    const seen: WorkerToEdgeFrame[] = [];
    link.onFrame('s1', (frame) => seen.push(frame));
    link.send(open('s1'));
    const w1 = await placed(links, 'w1');
    state.live.delete('w1');
    await link.checkRegistry();
    state.nowMs = 5_999;
    await link.checkRegistry();
    link.send(audio('s1', 9));
    expect(failovers).toEqual([]);
    expect(w1.framesOf('audio')).toHaveLength(1);

    state.nowMs = 6_000;
    await link.checkRegistry();
    expect(failovers).toEqual([{ session: 's1', from: 'w1', reason: 'worker_lost' }]);
    expect(seen).toEqual([{ kind: 'handover', session: 's1', reason: 'worker_lost' }]);
    expect(w1.closed).toBe(true);
    const w2 = await placed(links, 'w2');
    link.send(audio('s1', 10));
    expect(w2.frames.map((f) => f.kind)).toEqual(['open', 'audio']);
    expect(link.workerOf('s1')).toBe('ws://w2/relay');
    await link.close();
  });

  it('moves nothing when the registration comes back within the window (a registry refilled by heartbeats)', async () => {
    const { link, links, failovers, state } = registryFleet();
    link.send(open('s1'));
    await placed(links, 'w1');
    state.live.delete('w1');
    await link.checkRegistry();
    state.nowMs = 4_000;
    state.live.add('w1');
    await link.checkRegistry();
    state.live.delete('w1');
    state.nowMs = 9_000;
    await link.checkRegistry();
    expect(failovers).toEqual([]);
    // Gone again from 9 s: the window counts from there.
    state.nowMs = 15_000;
    await link.checkRegistry();
    expect(failovers.map((e) => e.reason)).toEqual(['worker_lost']);
    await link.close();
  });

  it('an unreadable registry says nothing about the workers: no move, and the window starts again', async () => {
    const { link, links, failovers, state } = registryFleet();
    link.send(open('s1'));
    await placed(links, 'w1');
    state.live.delete('w1');
    await link.checkRegistry();
    state.unreadable = true;
    state.nowMs = 7_000;
    await link.checkRegistry();
    expect(failovers).toEqual([]);
    state.unreadable = false;
    state.nowMs = 8_000;
    await link.checkRegistry();
    expect(failovers).toEqual([]);
    state.nowMs = 14_000;
    await link.checkRegistry();
    expect(failovers).toHaveLength(1);
    await link.close();
  });
});
