/**
 * The few Cloudflare Workers runtime shapes the adapter uses, declared here rather than pulling the
 * whole `@cloudflare/workers-types` (whose globals clash with the DOM and Node types the rest of the
 * repository compiles against).
 */
export interface DurableObjectId {
  toString(): string;
}

export interface DurableObjectStub {
  fetch(request: Request): Promise<Response>;
}

export interface DurableObjectNamespace {
  idFromName(name: string): DurableObjectId;
  get(id: DurableObjectId): DurableObjectStub;
}

/** A WebSocket as Workers hands it out: server ends of pairs, and outbound sockets from `fetch`. */
export interface WorkersWebSocket {
  readonly readyState: number;
  accept(): void;
  send(data: string | ArrayBuffer | ArrayBufferView): void;
  close(code?: number, reason?: string): void;
  /** Hibernation: state that survives the Durable Object being evicted (at most 2 KiB). */
  serializeAttachment(value: unknown): void;
  deserializeAttachment(): unknown;
  addEventListener(type: 'message', listener: (event: { data: string | ArrayBuffer }) => void): void;
  addEventListener(type: 'close', listener: (event: { code: number; reason: string }) => void): void;
  addEventListener(type: 'error', listener: (event: unknown) => void): void;
}

/** Durable Object storage (the key-value part). */
export interface DurableObjectStorage {
  get<T>(key: string): Promise<T | undefined>;
  put(key: string, value: unknown): Promise<void>;
  deleteAll(): Promise<void>;
}

export interface DurableObjectState {
  readonly storage: DurableObjectStorage;
  /** Accepts a server socket with the hibernation API: events arrive as `webSocket*` methods. */
  acceptWebSocket(socket: WorkersWebSocket, tags?: string[]): void;
  getWebSockets(tag?: string): WorkersWebSocket[];
}

/** `new WebSocketPair()`: [client end for the Response, server end for us]. */
export function webSocketPair(): [WorkersWebSocket, WorkersWebSocket] {
  const Pair = (globalThis as unknown as { WebSocketPair: new () => Record<0 | 1, WorkersWebSocket> }).WebSocketPair;
  const pair = new Pair();
  return [pair[0], pair[1]];
}

/** The 101 response that hands `client` to the caller. */
export function upgradeResponse(client: WorkersWebSocket, protocol: string | undefined): Response {
  const headers = protocol === undefined ? undefined : { 'sec-websocket-protocol': protocol };
  return new Response(null, { status: 101, webSocket: client, headers } as ResponseInit);
}

/** The socket a `fetch` upgrade returned, if it was accepted. */
export function responseWebSocket(response: Response): WorkersWebSocket | undefined {
  return (response as Response & { webSocket?: WorkersWebSocket | null }).webSocket ?? undefined;
}
