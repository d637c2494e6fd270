import { encodeRelayFrame, RELAY_CLOSE_CODES, type WorkerToEdgeFrame } from '@venus/protocol';
import { holdWritesForThisTurn } from '@venus/protocol/node';
import type { WebSocket } from 'ws';
import type { RouteTarget } from './session-routes.ts';

export interface RelayConnectionOptions {
  /** Bytes the edge may leave unread before it is dropped. */
  maxBufferedBytes: number;
  /** Called once when the connection starts closing (a `close` or a cut), with the close code. */
  onClosing(connection: RelayConnection, code: number): void;
}

/** How long a closing socket may take to finish its close handshake before it is cut. */
const CLOSE_TIMEOUT_MS = 5_000;

/**
 * One edge's relay socket on the worker side: writes encoded frames with a hard cap on what may
 * wait unsent, and tracks liveness for the heartbeat. An edge that stops reading is closed with
 * RELAY_CLOSE_CODES.slowConsumer (4008) rather than let its backlog grow this process's memory.
 *
 * @example
 *   const connection = new RelayConnection(socket, { maxBufferedBytes: 8 << 20, onClosing });
 *   connection.sendFrame({ kind: 'closed', session: 's1', reason: 'done' });
 */
export class RelayConnection implements RouteTarget {
  readonly socket: WebSocket;
  /** Set by each pong; the heartbeat clears it before each ping. */
  alive = true;
  readonly #options: RelayConnectionOptions;
  #closing = false;

  constructor(socket: WebSocket, options: RelayConnectionOptions) {
    this.socket = socket;
    this.#options = options;
    socket.on('pong', () => {
      this.alive = true;
    });
  }

  get closing(): boolean {
    return this.#closing;
  }

  sendFrame(frame: WorkerToEdgeFrame): void {
    this.sendBytes(encodeRelayFrame(frame));
  }

  sendBytes(bytes: Uint8Array): void {
    if (this.#closing || this.socket.readyState !== this.socket.OPEN) return;
    if (this.socket.bufferedAmount + bytes.length > this.#options.maxBufferedBytes) {
      const reason = `slow consumer: over ${this.#options.maxBufferedBytes} bytes unread`;
      this.close(RELAY_CLOSE_CODES.slowConsumer, reason);
      return;
    }
    // A session host's frames for many sessions in one turn leave in one write.
    holdWritesForThisTurn(this.socket);
    this.socket.send(bytes, { binary: true });
  }

  /** Starts the close handshake, and cuts the socket if the peer does not finish it. */
  close(code: number, reason: string): void {
    if (this.#closing) return;
    this.#closing = true;
    this.#options.onClosing(this, code);
    this.socket.close(code, reason);
    const timer = setTimeout(() => this.socket.terminate(), CLOSE_TIMEOUT_MS);
    timer.unref();
    this.socket.once('close', () => clearTimeout(timer));
  }

  /** One heartbeat tick: cut a peer that did not answer the last ping, else ping again. */
  heartbeat(): void {
    if (!this.alive) {
      if (!this.#closing) this.#options.onClosing(this, 1006);
      this.#closing = true;
      this.socket.terminate();
      return;
    }
    this.alive = false;
    this.socket.ping();
  }
}
