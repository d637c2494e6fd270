import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { VenusMetrics } from './metrics.ts';

export interface MetricsServer {
  /** http://host:port/metrics */
  url: string;
  close(): Promise<void>;
}

/**
 * A small HTTP listener with `GET /metrics` (and `GET /healthz`) for a process that serves no HTTP
 * of its own (the harness). Node's http server rather than a framework: two fixed routes, no body.
 *
 * @example
 *   const server = await serveMetrics(metrics, { port: 9464, hostname: '0.0.0.0' });
 */
export async function serveMetrics(
  metrics: VenusMetrics,
  options: { port: number; hostname?: string },
): Promise<MetricsServer> {
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://metrics').pathname;
    if (request.method === 'GET' && path === '/metrics') {
      metrics.render().then(
        (text) => response.writeHead(200, { 'content-type': metrics.contentType }).end(text),
        (error: unknown) => response.writeHead(500, { 'content-type': 'text/plain' }).end(String(error)),
      );
      return;
    }
    if (request.method === 'GET' && path === '/healthz') {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      return;
    }
    response.writeHead(404).end();
  });
  const hostname = options.hostname ?? '127.0.0.1';
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, hostname, () => resolve((server.address() as AddressInfo).port));
  });
  const host = hostname.includes(':') ? `[${hostname}]` : hostname;
  return {
    url: `http://${host}:${port}/metrics`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}
