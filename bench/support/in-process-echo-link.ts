import {
  decodeEdgeToWorkerFrame,
  decodeWorkerToEdgeFrame,
  type EdgeToWorkerFrame,
  encodeRelayFrame,
  type WorkerLink,
  type WorkerToEdgeFrame,
} from '@venus/protocol';
import { EchoFrameHost } from './echo-frame-host.ts';

/** What the link spent on the worker's half of each round trip, so a caller can leave it out. */
export interface WorkerHalf {
  /** µs in the worker's decode of the edge's frames and the encode of its echoes (the echo host's few lines are not timed). */
  us: number;
}

/**
 * A WorkerLink to an EchoFrameHost in the same thread, with no socket between them: every frame
 * still goes through the msgpack relay codec both ways, as over the relay socket, and the echo
 * comes back synchronously. With it the relay benchmark can tell the relay socket's share of the
 * edge's cost from the client side's, and the frame-cost benchmark can time the edge alone
 * (`half.us` is the worker's share, timed apart).
 *
 * @example
 *   const half = { us: 0 };
 *   const edge = await serveEdgeNode({ link: inProcessEchoLink(half), port: 0 });
 */
export function inProcessEchoLink(half: WorkerHalf = { us: 0 }): WorkerLink {
  const host = new EchoFrameHost();
  const listeners = new Map<string, (frame: WorkerToEdgeFrame) => void>();
  host.onFrame((frame) => {
    const started = performance.now();
    const bytes = encodeRelayFrame(frame);
    half.us += (performance.now() - started) * 1000;
    const decoded = decodeWorkerToEdgeFrame(bytes);
    if (decoded.ok) listeners.get(frame.session)?.(decoded.frame);
  });
  return {
    send(frame: EdgeToWorkerFrame) {
      const bytes = encodeRelayFrame(frame);
      const started = performance.now();
      const decoded = decodeEdgeToWorkerFrame(bytes);
      half.us += (performance.now() - started) * 1000;
      // The echo comes back within this call, through the edge's own listener: edge time, not timed here.
      if (decoded.ok) host.handleFrame(decoded.frame);
    },
    onFrame(session, listener) {
      listeners.set(session, listener);
      return () => listeners.delete(session);
    },
    close: async () => {},
  };
}
