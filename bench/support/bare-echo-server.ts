import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import { FRAME_MS, isAppend } from './echo-wire.ts';

export interface BareEchoServer {
  /** ws://127.0.0.1:port/ */
  url: string;
  close(): Promise<void>;
}

export const ID = '0123456789abcdef01234567';

/**
 * The baseline of the relay benchmark: a bare `ws` echo server on loopback that answers each message
 * at once with one small message in the shape of the edge's echo (a `venus.timeline` event with the
 * frame's number), so the load client measures the same way against both. Everything the edge path
 * does beyond that (parsing, conversion, the relay hop, the two audio deltas it sends per echoed
 * frame) counts as what the edge and the relay add.
 *
 * @example
 *   const bare = await serveBareEcho();
 *   // point the load client at bare.url, then:
 *   await bare.close();
 */
export async function serveBareEcho(): Promise<BareEchoServer> {
  return serveOnLoopback((socket) => {
    let frames = 0;
    socket.on('message', (data: Buffer) => {
      if (!isAppend(data)) return;
      const n = frames++;
      const event = {
        session: `sess_${ID}`,
        seq: n + 1,
        chunk: n,
        atMs: n * FRAME_MS,
        stream: 'assistant',
        type: 'assistant.audio',
        data: { utteranceId: 'utt_echo', audioChunkSeq: n, startMs: n * FRAME_MS, durationMs: FRAME_MS },
      };
      socket.send(JSON.stringify({ event_id: `event_${ID}`, type: 'venus.timeline', event }));
    });
  });
}

/**
 * A `ws` server on a free loopback port (no compression). Each socket is greeted with a
 * `session.created`, as the edge greets it, then handed to `onConnection`.
 */
export async function serveOnLoopback(onConnection: (socket: WebSocket) => void): Promise<BareEchoServer> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    wss.once('listening', resolve);
    wss.once('error', reject);
  });
  wss.on('connection', (socket) => {
    socket.send(JSON.stringify({ type: 'session.created', event_id: `event_${ID}`, session: { id: `sess_${ID}` } }));
    onConnection(socket);
  });
  const { port } = wss.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}/`,
    async close() {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
