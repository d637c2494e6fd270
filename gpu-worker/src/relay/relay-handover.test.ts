import {
  decodeWorkerToEdgeFrame,
  type EdgeToWorkerFrame,
  encodeRelayFrame,
  HANDOVER_REASON,
  SessionConfigSchema,
  type WorkerToEdgeFrame,
} from '@venus/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type RelayFrameHost, type RelayServer, serveRelay } from './relay-server.ts';

/** FAKE session host: records frames and handovers; a handover answers `closed` (handover) on a later turn. */
class FakeHost implements RelayFrameHost {
  readonly frames: EdgeToWorkerFrame[] = [];
  readonly handedOver: string[] = [];
  readonly #listeners = new Set<(frame: WorkerToEdgeFrame) => void>();

  handleFrame(frame: unknown): void {
    const f = frame as EdgeToWorkerFrame;
    this.frames.push(f);
    if (f.kind === 'close') this.emit({ kind: 'closed', session: f.session, reason: f.reason });
  }

  handOver(session: string): void {
    this.handedOver.push(session);
    setImmediate(() => this.emit({ kind: 'closed', session, reason: HANDOVER_REASON }));
  }

  onFrame(listener: (frame: WorkerToEdgeFrame) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  emit(frame: WorkerToEdgeFrame): void {
    for (const listener of this.#listeners) listener(frame);
  }
}

/** A real WebSocket edge connection to the relay, collecting the worker's frames. */
async function edge(url: string) {
  const socket = new WebSocket(url);
  const received: WorkerToEdgeFrame[] = [];
  const waiters = new Set<() => void>();
  socket.on('message', (data) => {
    const decoded = decodeWorkerToEdgeFrame(new Uint8Array(data as Buffer));
    if (decoded.ok) received.push(decoded.frame);
    for (const w of [...waiters]) w();
  });
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  return {
    received,
    send: (frame: EdgeToWorkerFrame) => socket.send(encodeRelayFrame(frame)),
    /** Resolves once a received frame matches: waits for the frame, not for a time. */
    next: (match: (f: WorkerToEdgeFrame) => boolean) =>
      new Promise<WorkerToEdgeFrame>((resolve) => {
        const look = () => {
          const found = received.find(match);
          if (found === undefined) return;
          waiters.delete(look);
          resolve(found);
        };
        waiters.add(look);
        look();
      }),
    close: () => socket.close(),
  };
}

/** Waits until `cond` holds, looking again each turn of the event loop (no timer in the condition). */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((resolve) => setTimeout(resolve, 5));
}

const config = SessionConfigSchema.parse({});
const open = (session: string): EdgeToWorkerFrame => ({ kind: 'open', session, tenant: 't1', config });

describe('relay handover (drain)', () => {
  let relay: RelayServer | undefined;
  afterEach(async () => {
    await relay?.close();
  });

  it('asks the edge to move each session, lets it go on the handover close, and refuses new ones', async () => {
    const host = new FakeHost();
    relay = await serveRelay({ host, port: 0 });
    const e = await edge(relay.url);
    e.send(open('s1'));
    e.send(open('s2'));
    e.send({ kind: 'text', session: 's2', itemId: 'i1', text: 'hello' });
    await until(() => host.frames.length === 3);
    expect(relay.sessionCount).toBe(2);

    relay.handOverAll();
    await e.next((f) => f.kind === 'handover' && f.session === 's2');
    expect(e.received.filter((f) => f.kind === 'handover')).toEqual([
      { kind: 'handover', session: 's1', reason: 'draining' },
      { kind: 'handover', session: 's2', reason: 'draining' },
    ]);
    // Until the edge's close, the session is still the worker's: input goes on reaching it.
    e.send({ kind: 'text', session: 's1', itemId: 'i2', text: 'still here' });
    e.send({ kind: 'close', session: 's1', reason: HANDOVER_REASON });
    e.send({ kind: 'text', session: 's1', itemId: 'i3', text: 'already on its way' });
    e.send(open('s3'));
    await e.next((f) => f.kind === 'closed' && f.session === 's1');
    await e.next((f) => f.kind === 'closed' && f.session === 's3');
    expect(host.handedOver).toEqual(['s1']);
    // The host never saw a close for s1 (no session.closed), nor input after the handover close.
    expect(host.frames.filter((f) => f.session === 's1').map((f) => f.kind)).toEqual(['open', 'text']);
    // Nor an error for input that was already on its way; a new session is refused while draining.
    expect(e.received.filter((f) => f.kind === 'error').map((f) => f.session)).toEqual(['s3']);
    expect(relay.sessionCount).toBe(1);

    // At the deadline, what is left is let go of without waiting for the edge.
    relay.releaseAll();
    await e.next((f) => f.kind === 'closed' && f.session === 's2');
    expect(e.received.find((f) => f.kind === 'closed' && f.session === 's2')).toEqual({
      kind: 'closed',
      session: 's2',
      reason: HANDOVER_REASON,
    });
    expect(relay.sessionCount).toBe(0);
    e.close();
  });

  it('a handover close from an edge that is not draining its worker is an ordinary close', async () => {
    const host = new FakeHost();
    relay = await serveRelay({ host, port: 0 });
    const e = await edge(relay.url);
    e.send(open('s1'));
    e.send({ kind: 'close', session: 's1', reason: HANDOVER_REASON });
    await until(() => host.frames.length === 2);
    expect(host.handedOver).toEqual([]);
    expect(host.frames.map((f) => f.kind)).toEqual(['open', 'close']);
    e.close();
  });
});
