import {
  decodeWorkerToEdgeFrame,
  type EdgeToWorkerFrame,
  type ErrorCode,
  encodeRelayFrame,
  VenusError,
  type WorkerLink,
  type WorkerToEdgeFrame,
} from '@venus/protocol';
import type { RelayConnector, RelaySocket } from './relay-socket.ts';
import { SessionListeners } from './session-listeners.ts';

export type RelayLinkEvent =
  | { type: 'connected'; generation: number; reopened: number; flushed: number }
  | { type: 'disconnected'; code: number; reason: string }
  | { type: 'connect_failed'; error: unknown; retryInMs: number }
  | { type: 'dropped'; session: string; frame: EdgeToWorkerFrame['kind']; code: ErrorCode }
  | { type: 'sessions_failed'; sessions: number }
  | { type: 'invalid_frame'; message: string };

export interface RelayLinkOptions {
  connect: RelayConnector;
  /** Outbound bytes that may wait (queued while reconnecting, or unsent on the socket). Default 8 MiB. */
  maxQueuedBytes?: number;
  /** Frames that may wait while reconnecting. Default 8,192. */
  maxQueuedFrames?: number;
  /** Reconnect delays: doubling from `initialMs` to `maxMs`, with jitter. Default 100 ms to 5 s. */
  backoff?: { initialMs?: number; maxMs?: number };
  /** Sessions waiting longer than this for the worker are ended (error + `closed`). Default 30 s. */
  maxOutageMs?: number;
  onEvent?(event: RelayLinkEvent): void;
}

interface QueuedFrame {
  frame: EdgeToWorkerFrame;
  bytes: Uint8Array;
}

interface SessionEntry {
  /** The `open` to re-send after a reconnect, with the latest config. */
  open: Extract<EdgeToWorkerFrame, { kind: 'open' }>;
  /** Socket generation the open went out on; 0 while it waits in the queue. */
  sentIn: number;
}

/** At most one dropped-frame error per session per this interval: one error covers a burst. */
const DROP_REPORT_INTERVAL_MS = 1_000;

/**
 * The edge's WorkerLink to one GPU worker across processes: relay frames as msgpack over a socket
 * opened by a RelayConnector. While the socket is down, frames wait in a bounded queue; on reconnect
 * every session the worker had is re-opened (the worker reclaims it, or opens a new incarnation from
 * the timeline store) before the queue is flushed in order. No frame is dropped silently: past the
 * bound, the session gets an `error` frame (`model_unavailable` while the worker is unreachable,
 * `rate_limited` when the socket cannot keep up), and sessions that wait longer than `maxOutageMs`
 * are ended with `error` + `closed`.
 *
 * @example
 *   const link = new RelayLink({ connect: wsRelayConnector('ws://gpu-1:8081/relay', { token }) });
 *   const off = link.onFrame('sess_1', (frame) => console.log(frame.kind));
 *   link.send({ kind: 'open', session: 'sess_1', tenant: 'default', config });
 */
export class RelayLink implements WorkerLink {
  readonly #connect: RelayConnector;
  readonly #maxQueuedBytes: number;
  readonly #maxQueuedFrames: number;
  readonly #initialBackoffMs: number;
  readonly #maxBackoffMs: number;
  readonly #maxOutageMs: number;
  readonly #onEvent: (event: RelayLinkEvent) => void;
  readonly #listeners = new SessionListeners();
  readonly #sessions = new Map<string, SessionEntry>();
  readonly #lastDropReport = new Map<string, number>();
  #queue: QueuedFrame[] = [];
  #queuedBytes = 0;
  #socket: RelaySocket | undefined;
  #generation = 0;
  #attempt = 0;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  #outageTimer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  constructor(options: RelayLinkOptions) {
    this.#connect = options.connect;
    this.#maxQueuedBytes = options.maxQueuedBytes ?? 8 * 1024 * 1024;
    this.#maxQueuedFrames = options.maxQueuedFrames ?? 8_192;
    this.#initialBackoffMs = options.backoff?.initialMs ?? 100;
    this.#maxBackoffMs = options.backoff?.maxMs ?? 5_000;
    this.#maxOutageMs = options.maxOutageMs ?? 30_000;
    this.#onEvent = options.onEvent ?? (() => {});
    this.#startOutageClock();
    this.#dial();
  }

  /** True while a socket to the worker is open. */
  get connected(): boolean {
    return this.#socket !== undefined;
  }

  /** Sessions this link would re-open after a reconnect. */
  get sessionCount(): number {
    return this.#sessions.size;
  }

  send(frame: EdgeToWorkerFrame): void {
    if (this.#closed) throw new VenusError('model_unavailable', 'the worker link is closed');
    this.#track(frame);
    const bytes = encodeRelayFrame(frame);
    const socket = this.#queue.length === 0 ? this.#socket : undefined;
    if (socket !== undefined) {
      // A `close` always goes out: it is tiny and tells the worker to free the session.
      if (frame.kind !== 'close' && socket.bufferedAmount() + bytes.length > this.#maxQueuedBytes) {
        this.#drop(frame, 'rate_limited', 'the link to the GPU worker is congested: input was dropped');
        return;
      }
      if (socket.send(bytes)) {
        this.#sent(frame);
        return;
      }
    }
    const full = this.#queuedBytes + bytes.length > this.#maxQueuedBytes || this.#queue.length >= this.#maxQueuedFrames;
    if (full && frame.kind !== 'close') {
      this.#drop(frame, 'model_unavailable', 'the GPU worker is unreachable and the reconnect queue is full');
      return;
    }
    this.#queue.push({ frame, bytes });
    this.#queuedBytes += bytes.length;
  }

  onFrame(session: string, listener: (frame: WorkerToEdgeFrame) => void): () => void {
    return this.#listeners.add(session, listener);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#retryTimer);
    clearTimeout(this.#outageTimer);
    this.#socket?.close(1000, 'edge link closed');
    this.#socket = undefined;
    this.#queue = [];
    this.#queuedBytes = 0;
    this.#sessions.clear();
    this.#listeners.clear();
  }

  #track(frame: EdgeToWorkerFrame): void {
    const session = frame.session;
    if (frame.kind === 'open') {
      this.#sessions.set(session, { open: frame, sentIn: 0 });
    } else if (frame.kind === 'config') {
      const entry = this.#sessions.get(session);
      if (entry !== undefined) entry.open = { ...entry.open, config: frame.config };
    } else if (frame.kind === 'close') {
      this.#sessions.delete(session);
      this.#lastDropReport.delete(session);
    }
  }

  #sent(frame: EdgeToWorkerFrame): void {
    if (frame.kind !== 'open') return;
    const entry = this.#sessions.get(frame.session);
    if (entry !== undefined) entry.sentIn = this.#generation;
  }

  #drop(frame: EdgeToWorkerFrame, code: ErrorCode, message: string): void {
    const session = frame.session;
    this.#onEvent({ type: 'dropped', session, frame: frame.kind, code });
    if (frame.kind === 'open') {
      // Without its open the session does not exist on the worker: end it now.
      this.#sessions.delete(session);
      this.#deliverLater({ kind: 'error', session, code, message: `${message} (session not opened)` });
      this.#deliverLater({ kind: 'closed', session, reason: code });
      return;
    }
    const now = Date.now();
    if (now - (this.#lastDropReport.get(session) ?? Number.NEGATIVE_INFINITY) < DROP_REPORT_INTERVAL_MS) return;
    this.#lastDropReport.set(session, now);
    this.#deliverLater({ kind: 'error', session, code, message: `${message} (${frame.kind})` });
  }

  #dial(): void {
    if (this.#closed) return;
    let socket: RelaySocket | undefined;
    const connect = async () =>
      this.#connect({
        onMessage: (bytes) => {
          if (socket === this.#socket) this.#receive(bytes);
        },
        onClose: (code, reason) => {
          if (socket !== this.#socket || socket === undefined) return;
          this.#socket = undefined;
          this.#onEvent({ type: 'disconnected', code, reason });
          this.#startOutageClock();
          this.#retry();
        },
      });
    connect().then(
      (opened) => {
        socket = opened;
        if (this.#closed) {
          opened.close(1000, 'edge link closed');
          return;
        }
        this.#opened(opened);
      },
      (error: unknown) => {
        const retryInMs = this.#retry();
        this.#onEvent({ type: 'connect_failed', error, retryInMs });
      },
    );
  }

  #opened(socket: RelaySocket): void {
    this.#socket = socket;
    this.#generation += 1;
    this.#attempt = 0;
    clearTimeout(this.#outageTimer);
    this.#outageTimer = undefined;
    this.#lastDropReport.clear();
    let reopened = 0;
    for (const entry of this.#sessions.values()) {
      if (entry.sentIn === 0) continue;
      if (!socket.send(encodeRelayFrame(entry.open))) return;
      entry.sentIn = this.#generation;
      reopened += 1;
    }
    const queue = this.#queue;
    let flushed = 0;
    for (const item of queue) {
      if (!socket.send(item.bytes)) break;
      this.#sent(item.frame);
      flushed += 1;
    }
    this.#queue = queue.slice(flushed);
    this.#queuedBytes = this.#queue.reduce((sum, item) => sum + item.bytes.length, 0);
    this.#onEvent({ type: 'connected', generation: this.#generation, reopened, flushed });
  }

  #retry(): number {
    if (this.#closed) return 0;
    clearTimeout(this.#retryTimer);
    const ceiling = Math.min(this.#maxBackoffMs, this.#initialBackoffMs * 2 ** this.#attempt);
    const delay = Math.round(ceiling * (0.5 + Math.random() * 0.5));
    this.#attempt += 1;
    this.#retryTimer = setTimeout(() => this.#dial(), delay);
    return delay;
  }

  /** While no socket is open, every `maxOutageMs` the sessions that waited are ended. */
  #startOutageClock(): void {
    if (this.#outageTimer !== undefined || this.#closed) return;
    this.#outageTimer = setTimeout(() => {
      this.#outageTimer = undefined;
      if (this.#socket !== undefined || this.#closed) return;
      this.#failWaitingSessions();
      this.#startOutageClock();
    }, this.#maxOutageMs);
  }

  #failWaitingSessions(): void {
    const sessions = new Set([...this.#sessions.keys(), ...this.#queue.map((item) => item.frame.session)]);
    this.#sessions.clear();
    this.#queue = [];
    this.#queuedBytes = 0;
    if (sessions.size === 0) return;
    this.#onEvent({ type: 'sessions_failed', sessions: sessions.size });
    const message = `the GPU worker has been unreachable for ${Math.round(this.#maxOutageMs / 1000)} s`;
    for (const session of sessions) {
      this.#deliver({ kind: 'error', session, code: 'model_unavailable', message });
      this.#deliver({ kind: 'closed', session, reason: 'model_unavailable' });
    }
  }

  #receive(bytes: Uint8Array): void {
    const decoded = decodeWorkerToEdgeFrame(bytes);
    if (!decoded.ok) {
      this.#onEvent({ type: 'invalid_frame', message: decoded.error.message });
      return;
    }
    this.#deliver(decoded.frame);
  }

  #deliver(frame: WorkerToEdgeFrame): void {
    if (frame.kind === 'closed') this.#sessions.delete(frame.session);
    this.#listeners.deliver(frame);
  }

  /** Frames made up inside `send` go out on a microtask, so the caller is never re-entered. */
  #deliverLater(frame: WorkerToEdgeFrame): void {
    queueMicrotask(() => this.#deliver(frame));
  }
}
