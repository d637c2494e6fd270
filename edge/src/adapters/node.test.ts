import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { FakeWorkerLink } from '../testing/fake-worker-link.ts';
import { type NodeEdgeServer, serveEdgeNode } from './node.ts';

interface Received {
  type: string;
  [key: string]: unknown;
}

/** A real `ws` client that queues what it receives, so a test can wait for the next event of a type. */
class Client {
  readonly socket: WebSocket;
  readonly received: Received[] = [];
  readonly #waiters: (() => void)[] = [];

  constructor(url: string, options?: WebSocket.ClientOptions, protocols?: string[]) {
    this.socket = new WebSocket(url, protocols, options);
    this.socket.on('message', (data) => {
      this.received.push(JSON.parse(String(data)) as Received);
      for (const wake of this.#waiters.splice(0)) wake();
    });
  }

  async next(type: string): Promise<Received> {
    for (;;) {
      const index = this.received.findIndex((event) => event.type === type);
      if (index >= 0) return this.received.splice(index, 1)[0]!;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  send(event: object | string): void {
    this.socket.send(typeof event === 'string' ? event : JSON.stringify(event));
  }

  closed(): Promise<{ code: number; reason: string }> {
    return new Promise((resolve) =>
      this.socket.once('close', (code, reason) => resolve({ code, reason: String(reason) })),
    );
  }
}

function rejectedStatus(url: string, options?: WebSocket.ClientOptions): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, options);
    socket.once('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0);
      socket.terminate();
    });
    socket.once('open', () => reject(new Error('connected without a key')));
    socket.once('error', () => {});
  });
}

let server: NodeEdgeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('serveEdgeNode', () => {
  it('serves the realtime protocol over a real WebSocket on a free port', async () => {
    const link = new FakeWorkerLink();
    server = await serveEdgeNode({ link, port: 0 });
    const { port } = new URL(server.url);
    expect(Number(port)).toBeGreaterThan(0);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);

    const client = new Client(`${server.url.replace('http', 'ws')}/v1/realtime`);
    const created = await client.next('session.created');
    const sessionId = (created.session as { id: string }).id;
    expect(link.frames[0]).toMatchObject({ kind: 'open', session: sessionId, tenant: 'default' });

    client.send('{not json');
    expect((await client.next('error')).error).toMatchObject({ code: 'invalid_json' });

    client.send({
      type: 'conversation.item.create',
      item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hello' }] },
    });
    await client.next('conversation.item.created');
    expect(link.framesOf('text')).toEqual([expect.objectContaining({ session: sessionId, text: 'hello' })]);

    link.pushTimeline(sessionId, {
      stream: 'assistant',
      type: 'assistant.utterance',
      data: { utteranceId: 'utt_1', phase: 'started' },
    });
    expect((await client.next('response.output_item.added')).item).toMatchObject({ id: 'utt_1' });

    const closed = client.closed();
    link.push({ kind: 'closed', session: sessionId, reason: 'done' });
    expect(await closed).toEqual({ code: 1000, reason: 'done' });
  });

  it('ends the worker session when the client disconnects', async () => {
    const link = new FakeWorkerLink();
    server = await serveEdgeNode({ link, port: 0 });
    const client = new Client(`${server.url.replace('http', 'ws')}/v1/realtime`);
    const sessionId = ((await client.next('session.created')).session as { id: string }).id;
    client.socket.close(1000, 'bye');
    await client.closed();
    // The close frame is sent once the edge has handled the disconnect; waiting for it times nothing
    // (a missing frame fails on the test timeout).
    await link.sent('close');
    expect(link.framesOf('close')).toEqual([expect.objectContaining({ session: sessionId })]);
    expect(link.listenerCount(sessionId)).toBe(0);
  });

  it('requires an API key on the upgrade when keys are configured', async () => {
    const link = new FakeWorkerLink();
    server = await serveEdgeNode({ link, port: 0, apiKeys: ['sk-test'] });
    const url = `${server.url.replace('http', 'ws')}/v1/realtime`;
    expect(await rejectedStatus(url)).toBe(401);
    expect(await rejectedStatus(url, { headers: { authorization: 'Bearer sk-nope' } })).toBe(401);

    const bearer = new Client(url, { headers: { authorization: 'Bearer sk-test' } });
    await bearer.next('session.created');
    const browserStyle = new Client(url, undefined, ['realtime', 'openai-insecure-api-key.sk-test']);
    await browserStyle.next('session.created');
    expect(browserStyle.socket.protocol).toBe('realtime');
  });

  it('answers a plain GET on the realtime route with 426', async () => {
    server = await serveEdgeNode({ link: new FakeWorkerLink(), port: 0 });
    expect((await fetch(`${server.url}/v1/realtime`)).status).toBe(426);
  });
});
