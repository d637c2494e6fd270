/**
 * One connected relay socket as the relay link sees it, whatever the runtime (`ws` on Node, an
 * outbound `fetch` upgrade on Workers). Each adapter is a RelayConnector of a few dozen lines.
 */
export interface RelaySocket {
  /** Writes one binary message; false when the socket is no longer open (nothing was sent). */
  send(bytes: Uint8Array): boolean;
  /** Bytes written but not yet on the network; 0 where the runtime cannot tell. */
  bufferedAmount(): number;
  close(code: number, reason: string): void;
}

export interface RelaySocketHandlers {
  onMessage(bytes: Uint8Array): void;
  /** The socket closed after it had opened (never called for a failed connect). */
  onClose(code: number, reason: string): void;
}

/** Opens one socket to the worker; rejects when the connection cannot be made. */
export type RelayConnector = (handlers: RelaySocketHandlers) => Promise<RelaySocket>;
