export { RelayLink, type RelayLinkEvent, type RelayLinkOptions } from './relay-link.ts';
export type { RelayConnector, RelaySocket, RelaySocketHandlers } from './relay-socket.ts';
export { SessionListeners } from './session-listeners.ts';
export { WebSocketWorkerLink, type WebSocketWorkerLinkOptions } from './websocket-worker-link.ts';
export { type WsRelayConnectorOptions, wsRelayConnector } from './ws-relay-connector.ts';
