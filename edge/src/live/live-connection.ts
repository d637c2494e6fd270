import { errorEvent } from '../realtime/protocol-error.ts';
import type { RealtimeConnection } from '../realtime/realtime-connection.ts';
import type { RealtimeTransport } from '../realtime/realtime-transport.ts';
import { LiveDialect } from './live-dialect.ts';

/** Where GPT-Live clients connect: `/v1/live`, and `/v1/live/sessions` (the `openai` package's LiveWS URL). */
export const LIVE_PATHS = ['/v1/live', '/v1/live/sessions'] as const;

export interface LiveConnectionOptions {
  /** The Live client's socket. */
  transport: RealtimeTransport;
  /** Opens the realtime session this one runs on (the edge's `openRealtime`, with its tenant and admission). */
  open(transport: RealtimeTransport): RealtimeConnection;
  /** Wall clock in ms (default Date.now): the Live timeline's offsets and usage seconds. */
  now?: () => number;
}

/**
 * One GPT-Live client socket. The session itself is a RealtimeConnection (auth, quotas, metering,
 * the worker session, conversation, client calls), opened on a transport that speaks Live: its
 * realtime server events go out translated by LiveDialect, and the client's Live events come in
 * translated to realtime ones. `session.closed` goes out before the socket closes, with
 * `close_requested` after the client's `session.close`, `expired` when the server ended the
 * session, and `connection_lost` for anything else.
 *
 * @example
 *   const live = new LiveConnection({ transport, open: (t) => edge.openRealtime(t, tenant, admission) });
 *   socket.on('message', (data) => live.handleMessage(data));
 */
export class LiveConnection {
  readonly #transport: RealtimeTransport;
  readonly #dialect: LiveDialect;
  readonly #realtime: RealtimeConnection;
  #closedSent = false;

  constructor(options: LiveConnectionOptions) {
    const now = options.now ?? Date.now;
    const startedAt = now();
    this.#transport = options.transport;
    this.#dialect = new LiveDialect({ nowMs: () => now() - startedAt });
    const outer = options.transport;
    this.#realtime = options.open({
      ...(outer.kind === undefined ? {} : { kind: outer.kind }),
      send: (text) => {
        for (const event of this.#dialect.outbound(JSON.parse(text) as Record<string, unknown>)) {
          outer.send(JSON.stringify(event));
        }
      },
      close: (code, reason) => {
        this.#sendClosed(code === 1000 ? 'expired' : 'connection_lost');
        outer.close(code, reason);
      },
      ...(outer.bufferedAmount === undefined ? {} : { bufferedAmount: () => outer.bufferedAmount?.() ?? 0 }),
    });
  }

  get closed(): boolean {
    return this.#realtime.closed;
  }

  handleMessage(data: unknown): void {
    if (this.#realtime.closed) return;
    if (typeof data !== 'string') {
      this.#refuse('invalid_event', 'binary messages are not supported: send JSON text events', null);
      return;
    }
    const inbound = this.#dialect.inbound(data);
    switch (inbound.kind) {
      case 'error':
        this.#send(errorEvent(inbound.error, inbound.clientEventId));
        return;
      case 'close':
        this.#sendClosed('close_requested');
        this.#realtime.handleClose(1000, 'session.close');
        this.#transport.close(1000, 'close_requested');
        return;
      case 'forward':
        for (const event of inbound.events) this.#realtime.handleMessage(JSON.stringify(event));
        return;
    }
  }

  handleClose(code?: number, reason?: string): void {
    this.#realtime.handleClose(code, reason);
  }

  #refuse(code: 'invalid_event', message: string, clientEventId: string | null): void {
    this.#send(errorEvent({ code, message }, clientEventId));
  }

  #send(event: Record<string, unknown>): void {
    for (const live of this.#dialect.outbound(event)) {
      try {
        this.#transport.send(JSON.stringify(live));
      } catch {
        // The socket is closing; its close event ends the session.
      }
    }
  }

  #sendClosed(reason: 'close_requested' | 'expired' | 'connection_lost'): void {
    if (this.#closedSent) return;
    this.#closedSent = true;
    try {
      this.#transport.send(JSON.stringify(this.#dialect.closed(reason)));
    } catch {
      // Already closed: nothing to tell.
    }
  }
}
