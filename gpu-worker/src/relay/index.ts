export { RelayConnection, type RelayConnectionOptions } from './relay-connection.ts';
export {
  type RelayFrameHost,
  type RelayServer,
  type RelayStats,
  type ServeRelayOptions,
  serveRelay,
} from './relay-server.ts';
export { type ClaimResult, type RouteTarget, SessionRoutes, type SessionRoutesOptions } from './session-routes.ts';
