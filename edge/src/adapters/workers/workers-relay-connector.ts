import { VenusError } from '@venus/protocol';
import type { RelayConnector } from '../../relay/relay-socket.ts';
import { responseWebSocket } from './cloudflare.ts';

/**
 * Connects to a GPU worker's relay from Workers: an outbound WebSocket opened by `fetch` with
 * `Upgrade: websocket`. Workers cannot tell how much is unsent, so the relay link's bound applies
 * only while reconnecting here. The worker's pings are answered by the runtime.
 *
 * @example
 *   const link = new RelayLink({ connect: workersRelayConnector(env.VENUS_WORKERS, env.VENUS_RELAY_TOKEN) });
 */
export function workersRelayConnector(url: string, token?: string): RelayConnector {
  return async (handlers) => {
    const headers: Record<string, string> = { upgrade: 'websocket' };
    if (token) headers.authorization = `Bearer ${token}`;
    let response: Response;
    try {
      response = await fetch(url.replace(/^ws/, 'http'), { headers });
    } catch (cause) {
      throw new VenusError('model_unavailable', `relay ${url}: ${String(cause)}`, { cause });
    }
    const ws = responseWebSocket(response);
    if (ws === undefined) {
      const code = response.status === 401 ? 'unauthorized' : 'model_unavailable';
      throw new VenusError(code, `relay upgrade to ${url} refused: HTTP ${response.status}`);
    }
    ws.accept();
    let open = true;
    const closed = (code: number, reason: string) => {
      if (!open) return;
      open = false;
      handlers.onClose(code, reason);
    };
    ws.addEventListener('message', (event) => {
      if (typeof event.data !== 'string') handlers.onMessage(new Uint8Array(event.data));
    });
    ws.addEventListener('close', (event) => {
      // Finish the close handshake; 1005/1006 may not be sent back.
      try {
        ws.close(event.code === 1005 || event.code === 1006 ? 1000 : event.code, 'closing');
      } catch {
        // Already closed.
      }
      closed(event.code, event.reason);
    });
    ws.addEventListener('error', () => closed(1006, 'socket error'));
    return {
      send(bytes) {
        if (!open) return false;
        try {
          ws.send(bytes);
          return true;
        } catch {
          return false;
        }
      },
      bufferedAmount: () => 0,
      close(code, reason) {
        open = false;
        try {
          ws.close(code, reason);
        } catch {
          // Already closed.
        }
      },
    };
  };
}
