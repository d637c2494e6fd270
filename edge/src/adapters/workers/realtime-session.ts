import { createEdgeApp } from '../../app.ts';
import type { Principal } from '../../auth/principal.ts';
import type { RealtimeConnection } from '../../realtime/realtime-connection.ts';
import { RelayLink } from '../../relay/relay-link.ts';
import { type DurableObjectState, upgradeResponse, type WorkersWebSocket, webSocketPair } from './cloudflare.ts';
import {
  ADMISSION_HEADER,
  SESSION_HEADER,
  type SessionAttachment,
  SessionAttachmentSchema,
  type SessionSettings,
  settingsFromSessionObject,
} from './session-attachment.ts';
import { type WorkersEdgeEnv, workerUrlFor } from './workers-env.ts';
import { workersRelayConnector } from './workers-relay-connector.ts';

interface Live {
  socket: WorkersWebSocket;
  connection: RealtimeConnection;
  link: RelayLink;
  attachment: SessionAttachment;
  instructions: string | undefined;
}

const INSTRUCTIONS_KEY = 'instructions';
const KEY_PROTOCOL_PREFIX = 'openai-insecure-api-key.';

/**
 * The Durable Object behind one realtime session on Cloudflare Workers. It accepts the client's
 * socket with the hibernation API and runs the same RealtimeConnection core as the Node edge, relaying
 * to the GPU worker over an outbound WebSocket that speaks the msgpack relay frames. Everything needed
 * to rebuild the session lives in the socket's attachment (and instructions in storage), so every event
 * takes one path: find the live connection, or rebuild it from the attachment after an eviction; a
 * rebuilt connection re-opens the worker session (reclaimed, or a new incarnation from the timeline)
 * and greets the client with `session.created` again.
 *
 * It does not hibernate while a session lives: the relay socket is an outgoing WebSocket, which
 * keeps a Durable Object in memory (only sockets accepted with `acceptWebSocket` hibernate), so a
 * live session is billed as duration for its whole length. The attachment is for surviving an
 * eviction (a deploy, a restart) with the client still connected. docs/workers.md has the costs.
 *
 * @example
 *   // wrangler.toml: [[durable_objects.bindings]] name = "REALTIME_SESSION", class_name = "RealtimeSession"
 *   const stub = env.REALTIME_SESSION.get(env.REALTIME_SESSION.idFromName(sessionId));
 *   return stub.fetch(new Request(url, { headers: { upgrade: 'websocket', 'x-venus-session': sessionId, ... } }));
 */
export class RealtimeSession {
  readonly #ctx: DurableObjectState;
  readonly #env: WorkersEdgeEnv;
  #live: Live | undefined;

  constructor(ctx: DurableObjectState, env: WorkersEdgeEnv) {
    this.#ctx = ctx;
    this.#env = env;
  }

  async fetch(request: Request): Promise<Response> {
    if (request.headers.get('upgrade')?.toLowerCase() !== 'websocket') {
      return new Response('Upgrade Required: connect with a WebSocket', { status: 426 });
    }
    const attachment = SessionAttachmentSchema.safeParse({
      sessionId: request.headers.get(SESSION_HEADER),
      principal: parseJson(request.headers.get(ADMISSION_HEADER)),
    });
    if (!attachment.success) return new Response('not a session hand-over from the edge Worker', { status: 400 });
    if (this.#ctx.getWebSockets().length > 0) return new Response('this session already has a client', { status: 409 });

    const [client, server] = webSocketPair();
    this.#ctx.acceptWebSocket(server);
    const { session: settings, ...principal } = attachment.data.principal;
    const state: SessionAttachment = { sessionId: attachment.data.sessionId, principal };
    server.serializeAttachment(state);
    this.#open(server, state, settings);
    return upgradeResponse(client, chooseProtocol(request.headers.get('sec-websocket-protocol')));
  }

  async webSocketMessage(socket: WorkersWebSocket, message: string | ArrayBuffer): Promise<void> {
    const live = await this.#liveFor(socket);
    live?.connection.handleMessage(message);
  }

  async webSocketClose(socket: WorkersWebSocket, code: number, reason: string): Promise<void> {
    // After an eviction nothing is rebuilt just to end: the worker ends an unclaimed session itself.
    if (this.#live?.socket === socket) this.#live.connection.handleClose(code, reason);
    this.#end(socket);
    closeQuietly(socket, code, reason);
  }

  async webSocketError(socket: WorkersWebSocket): Promise<void> {
    await this.webSocketClose(socket, 1006, 'socket error');
  }

  /** The live connection of `socket`, rebuilt from its attachment when the object was evicted. */
  async #liveFor(socket: WorkersWebSocket): Promise<Live | undefined> {
    if (this.#live?.socket === socket) return this.#live;
    const attachment = SessionAttachmentSchema.safeParse(socket.deserializeAttachment());
    if (!attachment.success) {
      closeQuietly(socket, 1011, 'session state lost');
      return undefined;
    }
    const instructions = await this.#ctx.storage.get<string>(INSTRUCTIONS_KEY);
    const settings = { ...attachment.data.settings, ...(instructions ? { instructions } : {}) };
    return this.#open(socket, attachment.data, settings);
  }

  #open(socket: WorkersWebSocket, attachment: SessionAttachment, settings: SessionSettings | undefined): Live {
    const url = workerUrlFor(this.#env, attachment.sessionId);
    const link = new RelayLink({ connect: workersRelayConnector(url, this.#env.VENUS_RELAY_TOKEN) });
    const live: Live = { socket, link, attachment, instructions: settings?.instructions, connection: undefined! };
    this.#live = live;
    const edge = createEdgeApp({ link, newSessionId: () => attachment.sessionId });
    const principal = { ...attachment.principal, ...(settings ? { session: settings } : {}) } as Principal;
    live.connection = edge.openRealtime(
      {
        send: (text) => {
          socket.send(text);
          this.#remember(live, text);
        },
        close: (code, reason) => {
          closeQuietly(socket, code, reason);
          this.#end(socket);
        },
      },
      principal.tenant,
      { principal },
    );
    return live;
  }

  /** Keeps what the client was last told about its session, for a rebuild. */
  #remember(live: Live, text: string): void {
    // Events start with their `event_id`, then `type`: a cheap look before parsing anything.
    if (!text.slice(0, 96).includes('"type":"session.')) return;
    const event = JSON.parse(text) as { type: string; session?: Record<string, unknown> };
    if ((event.type !== 'session.created' && event.type !== 'session.updated') || event.session === undefined) return;
    const settings = settingsFromSessionObject(event.session);
    live.attachment = { ...live.attachment, ...(settings ? { settings } : {}) };
    live.socket.serializeAttachment(live.attachment);
    const instructions = typeof event.session.instructions === 'string' ? event.session.instructions : '';
    if (instructions !== (live.instructions ?? '')) {
      live.instructions = instructions;
      void this.#ctx.storage.put(INSTRUCTIONS_KEY, instructions);
    }
  }

  #end(socket: WorkersWebSocket): void {
    const live = this.#live;
    if (live?.socket !== socket) return;
    this.#live = undefined;
    void live.link.close();
    void this.#ctx.storage.deleteAll();
  }
}

/** The subprotocol to answer with: the client's own, never the one carrying its key, unless it is all there is. */
function chooseProtocol(header: string | null): string | undefined {
  const offered = (header ?? '')
    .split(',')
    .map((protocol) => protocol.trim())
    .filter(Boolean);
  return offered.find((protocol) => !protocol.startsWith(KEY_PROTOCOL_PREFIX)) ?? offered[0];
}

function closeQuietly(socket: WorkersWebSocket, code: number, reason: string): void {
  try {
    // 1005 and 1006 describe a close; they may not be sent in one.
    socket.close(code === 1005 || code === 1006 ? 1000 : code, reason);
  } catch {
    // Already closed.
  }
}

function parseJson(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
