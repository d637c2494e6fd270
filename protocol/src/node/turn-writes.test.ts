import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { holdWritesForThisTurn } from './turn-writes.ts';

/** Counts the system-call-level writes (`_write`/`_writev`) a TCP socket makes. */
function countWrites(socket: Socket): { count: number } {
  const counter = { count: 0 };
  const target = socket as unknown as Record<'_write' | '_writev', (...args: unknown[]) => unknown>;
  for (const name of ['_write', '_writev'] as const) {
    const original = target[name].bind(socket);
    target[name] = (...args: unknown[]) => {
      counter.count += 1;
      return original(...args);
    };
  }
  return counter;
}

describe('holdWritesForThisTurn', () => {
  let server: WebSocketServer | undefined;
  afterEach(async () => {
    for (const client of server?.clients ?? []) client.terminate();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  async function pair(): Promise<{ serverSide: WebSocket; client: WebSocket; received: string[] }> {
    server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => server!.once('listening', resolve));
    const { port } = server.address() as AddressInfo;
    const accepted = new Promise<WebSocket>((resolve) => server!.once('connection', resolve));
    const client = new WebSocket(`ws://127.0.0.1:${port}`);
    const received: string[] = [];
    client.on('message', (data) => received.push(String(data)));
    await new Promise<void>((resolve) => client.once('open', () => resolve()));
    return { serverSide: await accepted, client, received };
  }

  const tcp = (ws: WebSocket) => (ws as unknown as { _socket: Socket })._socket;

  it('sends the frames of one turn in one write, in order', async () => {
    const { serverSide, client, received } = await pair();
    const writes = countWrites(tcp(serverSide));
    for (const text of ['one', 'two', 'three']) {
      holdWritesForThisTurn(serverSide);
      serverSide.send(text);
    }
    expect(writes.count).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes.count).toBe(1);
    await expect.poll(() => received).toEqual(['one', 'two', 'three']);
    client.close();
  });

  it('is what makes the difference: without it each frame is its own write', async () => {
    const { serverSide, client, received } = await pair();
    const writes = countWrites(tcp(serverSide));
    for (const text of ['one', 'two', 'three']) serverSide.send(text);
    await expect.poll(() => received).toEqual(['one', 'two', 'three']);
    expect(writes.count).toBe(3);
    client.close();
  });

  it('counts held bytes in bufferedAmount, so backpressure checks see them', async () => {
    const { serverSide, client } = await pair();
    holdWritesForThisTurn(serverSide);
    serverSide.send('x'.repeat(10_000));
    expect(serverSide.bufferedAmount).toBeGreaterThanOrEqual(10_000);
    await new Promise((resolve) => setImmediate(resolve));
    client.close();
  });

  it('leaves a socket that has gone away alone', async () => {
    const { serverSide, client } = await pair();
    tcp(serverSide).destroy();
    expect(() => holdWritesForThisTurn(serverSide)).not.toThrow();
    client.terminate();
  });
});
