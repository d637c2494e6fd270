/**
 * The client socket as the portable core sees it. Each runtime adapter (Node `ws`, Workers
 * WebSocketPair) wraps its socket in this and feeds the socket's messages to a RealtimeConnection.
 */
export interface RealtimeTransport {
  send(text: string): void;
  close(code: number, reason: string): void;
  /** Bytes queued but not yet written to the network, where the runtime can tell. */
  bufferedAmount?(): number;
  /** What carries it (`websocket`, `webrtc`, ...): the `transport` label of the edge's connection gauge. */
  readonly kind?: string;
}

/** WebSocket close reasons are limited to 123 bytes of UTF-8. */
export function closeReason(reason: string): string {
  const bytes = new TextEncoder().encode(reason);
  if (bytes.length <= 123) return reason;
  return new TextDecoder().decode(bytes.subarray(0, 120)).replace(/\uFFFD+$/, '');
}
