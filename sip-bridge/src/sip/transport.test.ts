import { createSocket } from 'node:dgram';
import { createServer, type Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { SipTransport } from './transport.ts';

const listening = (server: Server, port: number): Promise<void> =>
  new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });

/** Real sockets on loopback: a TCP port held by someone else, as another process would hold it. */
describe('SipTransport.listen', () => {
  it('a fixed port whose TCP side is taken fails with EADDRINUSE and leaves its UDP side free', async () => {
    const holder = createServer();
    await listening(holder, 0);
    const port = (holder.address() as { port: number }).port;
    try {
      await expect(SipTransport.listen({ host: '127.0.0.1', port, onMessage: () => {} })).rejects.toMatchObject({
        code: 'EADDRINUSE',
      });
      // The UDP port the failed start had bound was let go: it can be bound again.
      const udp = createSocket('udp4');
      await new Promise<void>((resolve, reject) => {
        udp.once('error', reject);
        udp.bind(port, '127.0.0.1', () => resolve());
      });
      await new Promise<void>((resolve) => udp.close(() => resolve()));
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  });

  it('port 0 gets one port for both UDP and TCP', async () => {
    const transport = await SipTransport.listen({ host: '127.0.0.1', port: 0, onMessage: () => {} });
    try {
      expect(transport.port).toBeGreaterThan(0);
      // The TCP side listens on the same number: a second listener there is refused.
      await expect(listening(createServer(), transport.port)).rejects.toMatchObject({ code: 'EADDRINUSE' });
    } finally {
      await transport.close();
    }
  });
});
