import { createSocket, type Socket } from 'node:dgram';
import { createServer, type Server, type Socket as TcpSocket } from 'node:net';
import { createLogger } from '@venus/protocol';
import { StreamFramer } from './stream-framer.ts';
import type { SipPeer } from './transactions.ts';

const log = createLogger('sip.transport');

export interface SipTransportOptions {
  host: string;
  port: number;
  /** Called with each datagram or framed stream message. */
  onMessage(bytes: Buffer, peer: SipPeer): void;
  /** Called with the header block of a stream message that cannot be framed, before the connection closes. */
  onUnframable?(head: Buffer, status: number, reason: string, peer: SipPeer): void;
  /** TCP connections held at once (default 1,024); more are refused. */
  maxConnections?: number;
  /** UDP receive buffer (default 4 MiB): bursts of calls overflow the default one. */
  receiveBufferBytes?: number;
}

/** A TCP connection idle this long is closed (RFC 3261 leaves it to the implementation). */
const TCP_IDLE_MS = 120_000;

/**
 * SIP over UDP and TCP on one port (RFC 3261 §18). Responses to a TCP request go back on its
 * connection; UDP ones to the source address and port (as with `rport`, RFC 3581), which is what
 * reaches a caller behind NAT.
 */
export class SipTransport {
  readonly #options: SipTransportOptions;
  readonly #udp: Socket;
  readonly #tcp: Server;
  readonly #connections = new Map<number, TcpSocket>();
  #nextConnection = 1;
  #port = 0;

  private constructor(options: SipTransportOptions) {
    this.#options = options;
    this.#udp = createSocket({ type: 'udp4', reuseAddr: false });
    this.#tcp = createServer((socket) => this.#accept(socket));
    this.#tcp.maxConnections = options.maxConnections ?? 1024;
  }

  /**
   * Binds UDP, then TCP on the same port. With port 0 the system picks a free UDP port whose TCP
   * twin may be held by another process (seen in a full test run: EADDRINUSE on the TCP listen);
   * then both are let go and another port is tried, up to 20 times. A fixed port that is taken
   * fails at once, with nothing left bound.
   */
  static async listen(options: SipTransportOptions): Promise<SipTransport> {
    const attempts = options.port === 0 ? 20 : 1;
    for (let attempt = 1; ; attempt++) {
      const transport = new SipTransport(options);
      try {
        await transport.#start();
        return transport;
      } catch (error) {
        await transport.#release();
        if (attempt >= attempts || (error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
      }
    }
  }

  get port(): number {
    return this.#port;
  }

  get host(): string {
    return this.#options.host;
  }

  send(bytes: Buffer, peer: SipPeer): void {
    if (peer.protocol === 'udp') {
      this.#udp.send(bytes, peer.port, peer.address, (error) => {
        if (error) log.debug({ err: error, peer: `${peer.address}:${peer.port}` }, 'SIP datagram not sent');
      });
      return;
    }
    const socket = peer.connection === undefined ? undefined : this.#connections.get(peer.connection);
    if (socket === undefined || socket.destroyed) {
      log.debug({ peer: `${peer.address}:${peer.port}` }, 'the TCP connection to answer on has closed');
      return;
    }
    socket.write(bytes);
  }

  async close(): Promise<void> {
    for (const socket of this.#connections.values()) socket.destroy();
    await new Promise<void>((resolve) => this.#udp.close(() => resolve()));
    await new Promise<void>((resolve) => this.#tcp.close(() => resolve()));
  }

  /** Lets go of whatever a failed start had bound. */
  async #release(): Promise<void> {
    await new Promise<void>((resolve) => {
      try {
        this.#udp.close(() => resolve());
      } catch {
        resolve(); // never bound, or closed already
      }
    });
    await new Promise<void>((resolve) => this.#tcp.close(() => resolve()));
  }

  async #start(): Promise<void> {
    const { host, port } = this.#options;
    await new Promise<void>((resolve, reject) => {
      this.#udp.once('error', reject);
      this.#udp.bind(port, host, () => {
        this.#udp.off('error', reject);
        resolve();
      });
    });
    try {
      this.#udp.setRecvBufferSize(this.#options.receiveBufferBytes ?? 4 * 1024 * 1024);
    } catch (error) {
      log.warn({ err: error }, 'could not raise the UDP receive buffer');
    }
    this.#port = this.#udp.address().port;
    this.#udp.on('message', (bytes, remote) =>
      this.#options.onMessage(bytes, { protocol: 'udp', address: remote.address, port: remote.port }),
    );
    this.#udp.on('error', (error) => log.warn({ err: error }, 'SIP UDP socket error'));
    await new Promise<void>((resolve, reject) => {
      this.#tcp.once('error', reject);
      this.#tcp.listen(this.#port, host, () => {
        this.#tcp.off('error', reject);
        resolve();
      });
    });
  }

  #accept(socket: TcpSocket): void {
    const id = this.#nextConnection++;
    this.#connections.set(id, socket);
    const framer = new StreamFramer();
    const peer: SipPeer = {
      protocol: 'tcp',
      address: socket.remoteAddress ?? '',
      port: socket.remotePort ?? 0,
      connection: id,
    };
    socket.setTimeout(TCP_IDLE_MS, () => socket.destroy());
    socket.on('data', (chunk) => {
      const { messages, error, status, head } = framer.push(chunk);
      for (const message of messages) this.#options.onMessage(message, peer);
      if (error !== undefined) {
        log.info(
          { peer: `${peer.address}:${peer.port}`, reason: error },
          'closing a SIP TCP connection that cannot be framed',
        );
        // The request is answered if it can be (400/413), then the connection closes once that is written.
        if (head !== undefined) this.#options.onUnframable?.(head, status ?? 400, error, peer);
        socket.pause();
        socket.destroySoon();
      }
    });
    socket.on('error', (error) => log.debug({ err: error }, 'SIP TCP connection error'));
    socket.on('close', () => this.#connections.delete(id));
  }
}
