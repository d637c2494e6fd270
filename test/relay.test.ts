import { setTimeout as sleep } from 'node:timers/promises';
import {
  decodeWorkerToEdgeFrame,
  type EdgeToWorkerFrame,
  encodeRelayFrame,
  RELAY_CLOSE_CODES,
  type SessionConfig,
  type WorkerToEdgeFrame,
} from '@venus/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { RelayLink, RelayLinkEvent } from '../edge/src/relay/relay-link.ts';
import { WebSocketWorkerLink, type WebSocketWorkerLinkOptions } from '../edge/src/relay/websocket-worker-link.ts';
import { type RelayFrameHost, type RelayServer, serveRelay } from '../gpu-worker/src/relay/index.ts';
import { FakeFrameHost } from './fixtures/fake-frame-host.ts';

const config: SessionConfig = { chunkMs: 160, deliveryPolicy: 'when_idle', voice: 'en-us' };
const open = (session: string): EdgeToWorkerFrame => ({ kind: 'open', session, tenant: 'default', config });
const text = (session: string, value: string): EdgeToWorkerFrame => ({
  kind: 'text',
  session,
  itemId: `item_${value}`,
  text: value,
});

/** Collects what a link delivers for one session, so a test can wait for a frame. */
const WAIT_MS = 30_000;

class Inbox {
  readonly frames: WorkerToEdgeFrame[] = [];
  readonly off: () => void;

  constructor(link: RelayLink, session: string) {
    this.off = link.onFrame(session, (frame) => this.frames.push(frame));
  }

  /** Waits for the frame (30 s budget on a loaded machine), not for a time. */
  async next(match: (frame: WorkerToEdgeFrame) => boolean): Promise<WorkerToEdgeFrame> {
    const deadline = Date.now() + WAIT_MS;
    while (Date.now() <= deadline) {
      const index = this.frames.findIndex(match);
      if (index >= 0) return this.frames.splice(index, 1)[0]!;
      await sleep(10);
    }
    throw new Error(`no matching frame; have ${JSON.stringify(this.frames.map((f) => f.kind))}`);
  }
}

const isText = (value: string) => (frame: WorkerToEdgeFrame) =>
  frame.kind === 'timeline' && frame.event.type === 'user.text' && frame.event.data.text === value;

/** Waits for an outcome (30 s budget on a loaded machine), not for a time. */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (Date.now() <= deadline) {
    if (check()) return;
    await sleep(10);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function relay(host: RelayFrameHost, options: Partial<Parameters<typeof serveRelay>[0]> = {}) {
  const server = await serveRelay({ host, port: 0, ...options });
  cleanups.push(() => server.close());
  return server;
}

function link(server: RelayServer | string, options: Partial<WebSocketWorkerLinkOptions> = {}) {
  const events: RelayLinkEvent[] = [];
  const url = typeof server === 'string' ? server : server.url;
  const l = new WebSocketWorkerLink({
    url,
    backoff: { initialMs: 20, maxMs: 100 },
    onEvent: (e) => events.push(e),
    ...options,
  });
  cleanups.push(() => l.close());
  return { link: l, events };
}

describe('relay: edge link <-> worker relay server', () => {
  it('carries frames both ways as msgpack, audio bytes intact', async () => {
    const host = new FakeFrameHost();
    const server = await relay(host);
    const { link: edge } = link(server);
    const inbox = new Inbox(edge, 's1');
    const pcm = Uint8Array.from({ length: 3200 }, (_, i) => i % 251);
    edge.send(open('s1'));
    edge.send({ kind: 'audio', session: 's1', pcm16k: pcm });
    edge.send(text('s1', 'hello'));
    const echoed = await inbox.next(isText('hello'));
    expect(echoed).toMatchObject({ kind: 'timeline', session: 's1', event: { seq: 1, stream: 'user' } });
    expect(host.kinds('s1')).toEqual(['open', 'audio', 'text:hello']);
    const audio = host.frames[1] as Extract<EdgeToWorkerFrame, { kind: 'audio' }>;
    expect(audio.pcm16k).toBeInstanceOf(Uint8Array);
    expect([...audio.pcm16k]).toEqual([...pcm]);
    expect(server.sessionCount).toBe(1);
    edge.send({ kind: 'close', session: 's1', reason: 'bye' });
    await until(() => host.kinds('s1').includes('close'), 'close');
    expect(server.sessionCount).toBe(0);
  });

  it('refuses frames for a session another edge connection owns', async () => {
    const host = new FakeFrameHost();
    const server = await relay(host);
    const a = link(server).link;
    const b = link(server).link;
    const inboxA = new Inbox(a, 's1');
    const inboxB = new Inbox(b, 's1');
    a.send(open('s1'));
    a.send(text('s1', 'from-a'));
    await inboxA.next(isText('from-a'));
    b.send(text('s1', 'from-b'));
    b.send(open('s1'));
    const refused = [await inboxB.next((f) => f.kind === 'error'), await inboxB.next((f) => f.kind === 'error')];
    expect(refused).toEqual([
      expect.objectContaining({ code: 'wrong_session', message: expect.stringContaining('not open on this relay') }),
      expect.objectContaining({ code: 'wrong_session', message: expect.stringContaining('another edge connection') }),
    ]);
    expect(host.kinds('s1')).toEqual(['open', 'text:from-a']);
    a.send(text('s1', 'again'));
    await inboxA.next(isText('again'));
    expect(inboxB.frames).toEqual([]);
  });

  it('requires the relay token when one is set', async () => {
    const server = await relay(new FakeFrameHost(), { token: 'relay-secret' });
    const wrong = link(server, { token: 'nope' });
    await until(() => wrong.events.some((e) => e.type === 'connect_failed'), 'a refused connect');
    const failed = wrong.events.find((e) => e.type === 'connect_failed');
    expect(failed?.type === 'connect_failed' && (failed.error as { code?: string }).code).toBe('unauthorized');
    const right = link(server, { token: 'relay-secret' });
    await until(() => right.link.connected, 'a connect with the token');
  });

  it('reconnects after the relay restarts: sessions are re-opened and queued frames follow in order', async () => {
    const host = new FakeFrameHost();
    let server = await relay(host);
    const port = server.port;
    const { link: edge, events } = link(server);
    const inbox = new Inbox(edge, 's1');
    edge.send(open('s1'));
    edge.send(text('s1', 'before'));
    await inbox.next(isText('before'));

    await server.close();
    await until(() => !edge.connected, 'the link to notice');
    edge.send(text('s1', 'while-down-1'));
    edge.send(text('s1', 'while-down-2'));
    server = await relay(host, { port });
    await inbox.next(isText('while-down-2'));
    await inbox.next(isText('while-down-1'));
    // The closing relay ended the session on the worker; the link opened it again, then flushed.
    expect(host.kinds('s1')).toEqual([
      'open',
      'text:before',
      'close',
      'open',
      'text:while-down-1',
      'text:while-down-2',
    ]);
    expect(events.filter((e) => e.type === 'connected').at(-1)).toMatchObject({ reopened: 1, flushed: 2 });
    edge.send(text('s1', 'after'));
    await inbox.next(isText('after'));
  });

  it('keeps a lost connection’s sessions for a reclaiming edge, with the output it missed', async () => {
    const host = new FakeFrameHost();
    const server = await relay(host, { reclaimGraceMs: 5_000 });
    const first = await rawEdge(server.url);
    first.send(encodeRelayFrame(open('s1')));
    await until(() => host.kinds('s1').length === 1, 'the open');
    first.terminate();
    await until(() => server.stats().connections === 0, 'the drop');
    host.emitText('s1', 'said-while-away');

    const { link: edge } = link(server);
    const inbox = new Inbox(edge, 's1');
    edge.send(open('s1'));
    await inbox.next(isText('said-while-away'));
    expect(host.kinds('s1')).toEqual(['open']);
    edge.send(text('s1', 'back'));
    await inbox.next(isText('back'));
  });

  it('ends unreclaimed sessions after the grace period', async () => {
    const host = new FakeFrameHost();
    const server = await relay(host, { reclaimGraceMs: 50 });
    const first = await rawEdge(server.url);
    first.send(encodeRelayFrame(open('s1')));
    await until(() => host.kinds('s1').length === 1, 'the open');
    first.terminate();
    await until(() => host.kinds('s1').includes('close'), 'the session to end');
    expect(host.frames.at(-1)).toMatchObject({ kind: 'close', reason: 'edge connection lost' });
    expect(server.sessionCount).toBe(0);
  });

  it('drops a slow consumer with close code 4008 and keeps serving the others', async () => {
    const host = new FakeFrameHost();
    const maxBufferedBytes = 256 * 1024;
    const server = await relay(host, { maxBufferedBytes });
    const slow = await rawEdge(server.url);
    slow.send(encodeRelayFrame(open('slow')));
    const { link: fast } = link(server);
    const inbox = new Inbox(fast, 'fast');
    fast.send(open('fast'));
    await until(() => server.sessionCount === 2, 'both sessions');
    slow.pause();

    const big = 'x'.repeat(64 * 1024);
    for (let i = 0; i < 4_000 && server.stats().slowConsumerDrops === 0; i++) {
      host.emit({ kind: 'error', session: 'slow', code: 'internal_error', message: big });
      if (i % 16 === 0) await sleep(1);
    }
    expect(server.stats().slowConsumerDrops).toBe(1);
    const closed = new Promise<number>((resolve) => slow.once('close', (code) => resolve(code)));
    slow.resume();
    expect(await closed).toBe(RELAY_CLOSE_CODES.slowConsumer);

    fast.send(text('fast', 'still-here'));
    await inbox.next(isText('still-here'));
  });

  it('reports, never silently drops, frames past the reconnect queue bound', async () => {
    const host = new FakeFrameHost();
    const server = await relay(host);
    const { link: edge, events } = link(server, { maxQueuedBytes: 16 * 1024, maxOutageMs: 400 });
    const inbox = new Inbox(edge, 's1');
    edge.send(open('s1'));
    await until(() => server.sessionCount === 1, 'the open');
    await server.close();
    await until(() => !edge.connected, 'the link to notice');

    const pcm = new Uint8Array(6_000);
    for (let i = 0; i < 4; i++) edge.send({ kind: 'audio', session: 's1', pcm16k: pcm });
    const error = await inbox.next((f) => f.kind === 'error');
    expect(error).toMatchObject({ code: 'model_unavailable', message: expect.stringContaining('queue is full') });
    expect(events.filter((e) => e.type === 'dropped')).toHaveLength(2);

    // Nobody comes back: the waiting session is ended rather than left hanging.
    const ended = await inbox.next((f) => f.kind === 'closed');
    expect(ended).toMatchObject({ reason: 'model_unavailable' });
    expect(edge.sessionCount).toBe(0);
  });

  it('refuses new sessions beyond capacity and while draining, and keeps the live ones', async () => {
    const host = new FakeFrameHost();
    const server = await relay(host, { maxSessions: 1 });
    const { link: edge } = link(server);
    const first = new Inbox(edge, 's1');
    const second = new Inbox(edge, 's2');
    edge.send(open('s1'));
    edge.send(open('s2'));
    expect(await second.next((f) => f.kind === 'error')).toMatchObject({
      code: 'model_unavailable',
      message: expect.stringContaining('full'),
    });
    await second.next((f) => f.kind === 'closed');
    server.drain();
    edge.send({ kind: 'close', session: 's1', reason: 'done' });
    await first.next((f) => f.kind === 'closed');
    const third = new Inbox(edge, 's3');
    edge.send(open('s3'));
    expect(await third.next((f) => f.kind === 'error')).toMatchObject({ message: 'this worker is draining' });
    expect(host.frames.map((f) => `${f.kind}:${f.session}`)).toEqual(['open:s1', 'close:s1']);
  });

  it('answers an undecodable frame that names a session with invalid_event', async () => {
    const server = await relay(new FakeFrameHost());
    const socket = await rawEdge(server.url);
    const reply = new Promise<WorkerToEdgeFrame>((resolve) =>
      socket.once('message', (data) => {
        const decoded = decodeWorkerToEdgeFrame(data as Buffer);
        if (decoded.ok) resolve(decoded.frame);
      }),
    );
    socket.send(encodeRelayFrame({ kind: 'text', session: 's1', itemId: 'i', text: '' } as EdgeToWorkerFrame));
    expect(await reply).toMatchObject({ kind: 'error', session: 's1', code: 'invalid_event' });
    const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
    socket.send('not msgpack');
    expect(await closed).toBe(RELAY_CLOSE_CODES.undecodable);
  });
});

/** A bare `ws` client speaking the relay wire format, for tests that misbehave on purpose. */
async function rawEdge(url: string): Promise<WebSocket> {
  const socket = new WebSocket(url);
  cleanups.push(() => socket.terminate());
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  return socket;
}

describe('relay: a real session host behind the relay', () => {
  it('runs a typed turn: user.text in, assistant speech and text out', async () => {
    const { ReferenceModelPort } = await import('../gpu-worker/src/reference-model/index.ts');
    const { SessionHost, MemoryTimelineStore } = await import('../gpu-worker/src/index.ts');
    const { InProcessExecutor, FunctionRegistry, createBuiltinFunctions } = await import('@venus/harness-functions');
    const model = await ReferenceModelPort.create();
    const executor = new InProcessExecutor({ registry: new FunctionRegistry(createBuiltinFunctions()) });
    const store = new MemoryTimelineStore();
    const host = new SessionHost({ model, executor, store });
    cleanups.push(async () => {
      await host.close();
      await executor.close();
      await model.close();
      await store.close();
    });
    const server = await relay(host);
    const { link: edge } = link(server);
    const inbox = new Inbox(edge, 'sess_real');
    edge.send(open('sess_real'));
    edge.send(text('sess_real', 'what time is it in Tokyo'));

    await inbox.next(isText('what time is it in Tokyo'));
    const started = await inbox.next((f) => f.kind === 'timeline' && f.event.type === 'assistant.utterance');
    const said = await inbox.next((f) => f.kind === 'timeline' && f.event.type === 'assistant.text');
    const audio = await inbox.next((f) => f.kind === 'timeline' && f.event.type === 'assistant.audio');
    expect(started).toMatchObject({ event: { data: { phase: 'started' } } });
    expect(
      said.kind === 'timeline' && said.event.type === 'assistant.text' && said.event.data.delta.length,
    ).toBeGreaterThan(0);
    expect(
      audio.kind === 'timeline' && audio.event.type === 'assistant.audio' && audio.event.data.durationMs,
    ).toBeGreaterThan(0);
    edge.send({ kind: 'close', session: 'sess_real', reason: 'done' });
    await until(() => host.sessionCount === 0, 'the session to end');
  });
});
