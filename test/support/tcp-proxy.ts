import { createServer, type Socket, connect as tcpConnect } from 'node:net';

/** A TCP proxy on loopback in front of one address, which a test can cut. */
export interface TcpProxy {
  /** `host:port` of the proxy. */
  address: string;
  /**
   * Cuts every connection through it and stops listening, so reconnects are refused: the process
   * behind it has lost that peer while everything else it talks to stays up.
   */
  cut(): Promise<void>;
}

/**
 * Proxies connections to `target` (`host:port`). Used to take Redis away from one process of a
 * test fleet (the others reach Redis directly).
 */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const server = createServer((client) => {
    const upstream = tcpConnect(target.port, target.host);
    track(client);
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    const end = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.once('error', end).once('close', end);
    upstream.once('error', end).once('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address !== 'object') throw new Error('the proxy has no port');
  return {
    address: `127.0.0.1:${address.port}`,
    async cut() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
