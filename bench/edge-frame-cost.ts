import {
  decodeEdgeToWorkerFrame,
  decodeWorkerToEdgeFrame,
  type EdgeToWorkerFrame,
  encodeRelayFrame,
  SessionConfigSchema,
  type WorkerLink,
  type WorkerToEdgeFrame,
} from '@venus/protocol';
import { RealtimeConnection } from '../edge/src/realtime/realtime-connection.ts';
import { EchoFrameHost } from './support/echo-frame-host.ts';
import { APPEND_MESSAGE, SESSION_UPDATE_MESSAGE } from './support/echo-wire.ts';

export interface EdgeFrameCost {
  /** JavaScript time per echoed frame on the edge: parse, base64, resample, relay encode, relay decode, events out. */
  edgeUs: number;
  /** Messages and bytes sent to the client per frame. */
  messagesPerFrame: number;
  bytesPerFrame: number;
}

/**
 * The edge's own JavaScript per 20 ms frame with no sockets at all: one RealtimeConnection (a GA
 * client) on a link that round-trips every frame through the msgpack relay codec to an EchoFrameHost
 * in the same thread. Set beside the relay benchmark's CPU per echo, it says how much of that is
 * JavaScript and how much is socket I/O. The worker's half of the codec (decode of the edge's frame,
 * encode of the echo) is timed apart and left out.
 *
 * @example
 *   const cost = runEdgeFrameCost(30_000);
 */
export function runEdgeFrameCost(frames: number): EdgeFrameCost {
  const host = new EchoFrameHost();
  const listeners = new Map<string, (frame: WorkerToEdgeFrame) => void>();
  let workerUs = 0;
  host.onFrame((frame) => {
    const started = performance.now();
    const bytes = encodeRelayFrame(frame);
    workerUs += (performance.now() - started) * 1000;
    const decoded = decodeWorkerToEdgeFrame(bytes);
    if (decoded.ok) listeners.get(frame.session)?.(decoded.frame);
  });
  const link: WorkerLink = {
    send(frame: EdgeToWorkerFrame) {
      const bytes = encodeRelayFrame(frame);
      const started = performance.now();
      const decoded = decodeEdgeToWorkerFrame(bytes);
      workerUs += (performance.now() - started) * 1000;
      if (decoded.ok) host.handleFrame(decoded.frame);
    },
    onFrame(session, listener) {
      listeners.set(session, listener);
      return () => listeners.delete(session);
    },
    close: async () => {},
  };
  let messages = 0;
  let bytes = 0;
  const connection = new RealtimeConnection({
    link,
    transport: {
      send: (text) => {
        messages += 1;
        bytes += text.length;
      },
      close: () => {},
    },
    tenant: 'default',
    sessionId: 'sess_frame_cost',
    config: SessionConfigSchema.parse({ chunkMs: 160 }),
  });
  connection.start();
  connection.handleMessage(SESSION_UPDATE_MESSAGE.toString());
  const append = APPEND_MESSAGE.toString();
  for (let i = 0; i < Math.min(5_000, frames); i++) connection.handleMessage(append);
  messages = 0;
  bytes = 0;
  workerUs = 0;
  const started = performance.now();
  for (let i = 0; i < frames; i++) connection.handleMessage(append);
  const totalUs = (performance.now() - started) * 1000;
  connection.handleClose(1000);
  return {
    edgeUs: (totalUs - workerUs) / frames,
    messagesPerFrame: messages / frames,
    bytesPerFrame: bytes / frames,
  };
}
