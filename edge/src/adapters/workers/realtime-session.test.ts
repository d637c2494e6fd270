import { describe, expect, it } from 'vitest';
import type { DurableObjectState, DurableObjectStorage, WorkersWebSocket } from './cloudflare.ts';
import { RealtimeSession } from './realtime-session.ts';
import type { WorkersEdgeEnv } from './workers-env.ts';

/** FAKE hibernatable socket: keeps what was sent and its attachment, as workerd would across evictions. */
class FakeSocket implements WorkersWebSocket {
  readyState = 1;
  readonly sent: { type: string; [key: string]: unknown }[] = [];
  attachment: unknown;
  closedWith: { code?: number; reason?: string } | undefined;
  accept(): void {}
  send(data: string | ArrayBuffer | ArrayBufferView): void {
    this.sent.push(JSON.parse(String(data)));
  }
  close(code?: number, reason?: string): void {
    this.closedWith = { code, reason };
    this.readyState = 3;
  }
  serializeAttachment(value: unknown): void {
    this.attachment = structuredClone(value);
  }
  deserializeAttachment(): unknown {
    return structuredClone(this.attachment);
  }
  addEventListener(): void {}
  ofType(type: string) {
    return this.sent.filter((event) => event.type === type);
  }
}

/** FAKE Durable Object state: an in-memory storage map and the one accepted socket. */
class FakeState implements DurableObjectState {
  readonly map = new Map<string, unknown>();
  readonly sockets: WorkersWebSocket[] = [];
  readonly storage: DurableObjectStorage = {
    get: async <T>(key: string) => this.map.get(key) as T | undefined,
    put: async (key, value) => {
      this.map.set(key, value);
    },
    deleteAll: async () => this.map.clear(),
  };
  acceptWebSocket(socket: WorkersWebSocket): void {
    this.sockets.push(socket);
  }
  getWebSockets(): WorkersWebSocket[] {
    return this.sockets;
  }
}

// No relay listens here: the link keeps retrying in the background, which these tests do not need.
const env = { VENUS_WORKERS: 'ws://127.0.0.1:9/relay' } as WorkersEdgeEnv;
const principal = { tenant: 'acme', scopes: ['realtime'], keyId: 'key_1', kind: 'api_key', operator: false };

describe('RealtimeSession: state survives an eviction', () => {
  it('rebuilds the session from the socket attachment and storage after the object is evicted', async () => {
    const state = new FakeState();
    const socket = new FakeSocket();
    // As the first fetch left it: ids and principal only.
    socket.serializeAttachment({ sessionId: 'sess_evicted', principal });

    const first = new RealtimeSession(state, env);
    await first.webSocketMessage(
      socket,
      JSON.stringify({
        type: 'session.update',
        session: {
          voice: 'en-gb',
          instructions: 'Be brief.',
          input_audio_format: 'g711_ulaw',
          venus: { chunk_ms: 160 },
        },
      }),
    );
    expect(socket.ofType('session.updated')).toHaveLength(1);
    expect(state.map.get('instructions')).toBe('Be brief.');

    // The object is evicted; a new instance gets the next event on the same socket.
    const second = new RealtimeSession(state, env);
    await second.webSocketMessage(socket, '{"type":');
    const restored = socket.ofType('session.created').at(-1)?.session;
    expect(restored).toMatchObject({
      id: 'sess_evicted',
      voice: 'en-gb',
      instructions: 'Be brief.',
      input_audio_format: 'g711_ulaw',
      venus: { chunk_ms: 160 },
    });
    expect(socket.sent.at(-1)).toMatchObject({ type: 'error', error: { code: 'invalid_json' } });

    await second.webSocketClose(socket, 1005, '');
    expect(socket.closedWith).toEqual({ code: 1000, reason: '' });
    expect(state.map.size).toBe(0);
    await first.webSocketClose(socket, 1000, '');
  });

  it('closes a socket whose attachment cannot be read with 1011', async () => {
    const socket = new FakeSocket();
    socket.serializeAttachment({ nonsense: true });
    await new RealtimeSession(new FakeState(), env).webSocketMessage(socket, '{}');
    expect(socket.closedWith).toEqual({ code: 1011, reason: 'session state lost' });
  });
});
