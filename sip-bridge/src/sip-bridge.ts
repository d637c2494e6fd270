import type { WorkerLink } from '@venus/protocol';
import { CallControl } from './call/call-control.ts';
import { sipCallOpener } from './call/sip-call.ts';
import type { RoutingConfig } from './routing/routing-config.ts';
import { SipTransport } from './sip/transport.ts';
import { UserAgent } from './sip/user-agent.ts';

export interface SipBridgeOptions {
  host: string;
  port: number;
  /** Address for RTP and SDP (default: `host`). */
  mediaAddress?: string;
  routing: RoutingConfig;
  link: WorkerLink;
  maxCalls?: number;
}

/**
 * The SIP bridge: SIP over UDP and TCP on one port, each call a session over the WorkerLink.
 * `control` places outbound calls and transfers or hangs up calls by session id (the control API).
 *
 * @example
 *   const bridge = await SipBridge.start({ host: '127.0.0.1', port: 5060, routing, link });
 */
export class SipBridge {
  readonly ua: UserAgent;
  readonly control: CallControl;
  readonly #transport: SipTransport;

  private constructor(ua: UserAgent, control: CallControl, transport: SipTransport) {
    this.ua = ua;
    this.control = control;
    this.#transport = transport;
  }

  static async start(options: SipBridgeOptions): Promise<SipBridge> {
    let ua: UserAgent | undefined;
    let control: CallControl | undefined;
    const mediaAddress = options.mediaAddress ?? options.host;
    const inbound = sipCallOpener({ link: options.link, mediaAddress });
    const transport = await SipTransport.listen({
      host: options.host,
      port: options.port,
      onMessage: (bytes, peer) => ua?.receive(bytes, peer),
      onUnframable: (head, status, reason, peer) => ua?.refuse(head, status, reason, peer),
    });
    ua = new UserAgent({
      routing: options.routing,
      host: options.host,
      port: transport.port,
      send: (bytes, peer) => transport.send(bytes, peer),
      openCall: (context) => control!.inboundOpener(inbound)(context),
      ...(options.maxCalls === undefined ? {} : { maxCalls: options.maxCalls }),
    });
    control = new CallControl({ ua, link: options.link, mediaAddress, routing: options.routing });
    return new SipBridge(ua, control, transport);
  }

  get port(): number {
    return this.#transport.port;
  }

  async close(): Promise<void> {
    this.control.close();
    this.ua.close();
    await this.#transport.close();
  }
}
