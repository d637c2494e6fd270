import { RelayLink, type RelayLinkOptions } from './relay-link.ts';
import { type WsRelayConnectorOptions, wsRelayConnector } from './ws-relay-connector.ts';

export interface WebSocketWorkerLinkOptions extends Omit<RelayLinkOptions, 'connect'>, WsRelayConnectorOptions {
  /** The worker's relay, e.g. ws://gpu-1:8081/relay. */
  url: string;
}

/**
 * The edge's link to one GPU worker on Node: msgpack relay frames over `ws`, reconnecting with
 * backoff and re-opening its sessions, with a bounded queue while the worker is away (see RelayLink).
 *
 * @example
 *   const link = new WebSocketWorkerLink({ url: 'ws://127.0.0.1:8081/relay', token: process.env.VENUS_RELAY_TOKEN });
 *   const server = await serveEdgeNode({ link, port: 8080 });
 */
export class WebSocketWorkerLink extends RelayLink {
  readonly url: string;

  constructor(options: WebSocketWorkerLinkOptions) {
    const { url, token, silenceTimeoutMs, connectTimeoutMs, ...link } = options;
    super({
      ...link,
      connect: wsRelayConnector(url, {
        ...(token === undefined ? {} : { token }),
        ...(silenceTimeoutMs === undefined ? {} : { silenceTimeoutMs }),
        ...(connectTimeoutMs === undefined ? {} : { connectTimeoutMs }),
      }),
    });
    this.url = url;
  }
}
