import { createLogger, logUnlessTeardown, VenusError } from '@venus/protocol';
import { holdWritesForThisTurn } from '@venus/protocol/node';
import WebSocket from 'ws';
import type { RelayConnector, RelaySocket } from './relay-socket.ts';

export interface WsRelayConnectorOptions {
  /** Sent as `Authorization: Bearer <token>` on the upgrade. */
  token?: string;
  /** Cut the socket when the worker has sent nothing, not even a ping, for this long (checked every fifth of it). Default 25 s. */
  silenceTimeoutMs?: number;
  /** Give up on one connection attempt after this long. Default 5 s. */
  connectTimeoutMs?: number;
}

/** Largest worker message accepted; timeline frames are far smaller. */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
const log = createLogger('edge.relay');

/**
 * Connects to a worker's relay with `ws` (Node). The worker pings every few seconds; a socket that
 * hears nothing for `silenceTimeoutMs` is presumed dead and cut, so the link reconnects.
 *
 * @example
 *   const link = new RelayLink({ connect: wsRelayConnector('ws://gpu-1:8081/relay', { token }) });
 */
export function wsRelayConnector(url: string, options: WsRelayConnectorOptions = {}): RelayConnector {
  const silenceTimeoutMs = options.silenceTimeoutMs ?? 25_000;
  return (handlers) =>
    new Promise<RelaySocket>((resolve, reject) => {
      const ws = new WebSocket(url, {
        headers: options.token ? { authorization: `Bearer ${options.token}` } : {},
        handshakeTimeout: options.connectTimeoutMs ?? 5_000,
        maxPayload: MAX_MESSAGE_BYTES,
        perMessageDeflate: false,
        // RFC 6455 masks client frames so a browser page cannot poison a proxy's cache; this is
        // a server-to-server link, and an all-zero mask lets `ws` skip the copy and XOR of every
        // audio frame (about 1 KB, 50 times a second per session).
        generateMask: zeroMask,
      });
      let opened = false;
      // The worker speaks many times a second: each message only stamps the time, and a check a few
      // times per timeout cuts the socket once it has been silent for the whole of it (a timer
      // re-armed per message would cost more than the rest of the message's handling).
      let lastHeardMs = 0;
      let watchdog: ReturnType<typeof setInterval> | undefined;
      const heard = () => {
        lastHeardMs = Date.now();
      };
      const watch = () => {
        heard();
        watchdog = setInterval(
          () => {
            if (Date.now() - lastHeardMs >= silenceTimeoutMs) ws.terminate();
          },
          Math.max(10, Math.floor(silenceTimeoutMs / 5)),
        );
        watchdog.unref();
      };
      ws.on('unexpected-response', (_request, response) => {
        const status = response.statusCode ?? 0;
        const code = status === 401 ? 'unauthorized' : 'model_unavailable';
        reject(new VenusError(code, `relay upgrade to ${url} refused: HTTP ${status}`));
        ws.terminate();
      });
      ws.on('error', (error) => {
        if (!opened) reject(new VenusError('model_unavailable', `relay ${url}: ${error.message}`, { cause: error }));
        // Once open, the close event that follows ends the link's sessions; the cause is logged here.
        else logUnlessTeardown(log, error, 'relay socket failed', { fields: { url } });
      });
      ws.on('open', () => {
        opened = true;
        watch();
        resolve({
          send(bytes) {
            if (ws.readyState !== WebSocket.OPEN) return false;
            // Frames of many sessions arrive in one turn: they leave in one write.
            holdWritesForThisTurn(ws);
            ws.send(bytes, { binary: true });
            return true;
          },
          bufferedAmount: () => ws.bufferedAmount,
          close: (code, reason) => ws.close(code, reason),
        });
      });
      ws.on('ping', heard);
      ws.on('message', (data, isBinary) => {
        heard();
        if (isBinary) handlers.onMessage(toBytes(data));
      });
      ws.on('close', (code, reason) => {
        clearInterval(watchdog);
        if (opened) handlers.onClose(code, reason.toString());
      });
    });
}

function zeroMask(mask: Uint8Array): void {
  mask.fill(0);
}

function toBytes(data: WebSocket.RawData): Uint8Array {
  if (Array.isArray(data)) return Buffer.concat(data);
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  return data;
}
