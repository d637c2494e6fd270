import { type IncomingMessage, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { createLogger, logUnlessTeardown } from '@venus/protocol';

const log = createLogger('edge.upgrade');

type UpgradeListener = (request: IncomingMessage, socket: Duplex, head: Buffer) => void;
type RequestFn = (
  input: string | URL | Request,
  init?: RequestInit,
  env?: { incoming?: IncomingMessage },
) => Response | Promise<Response>;

/** Headers `ws`/Node manage for the connection, never copied from the app's response. */
const SKIPPED = new Set(['connection', 'content-length', 'keep-alive', 'transfer-encoding', 'upgrade']);

/**
 * @hono/node-ws answers an upgrade the app refuses with a bare status line (upstream:
 * honojs/middleware#1873), so a 429's Retry-After and every error body would be lost. This keeps
 * the app's whole response to each refused upgrade and writes that instead.
 *
 * @example
 *   const refusals = new UpgradeRefusals();
 *   const { injectWebSocket } = createNodeWebSocket({ app: refusals.wrapApp(app) });
 *   injectWebSocket(refusals.wrapServer(server));
 */
export class UpgradeRefusals {
  readonly #responses = new WeakMap<IncomingMessage, Response>();

  /** The app as the upgrade handler sees it: responses of 400 and above to upgrades are kept. */
  wrapApp<T extends { request: RequestFn }>(app: T): T {
    const wrapped = Object.create(app) as T;
    wrapped.request = async (input, init, env) => {
      const response = await app.request(input, init, env);
      if (response.status >= 400 && env?.incoming !== undefined) this.#responses.set(env.incoming, response);
      return response;
    };
    return wrapped;
  }

  /** The server as the upgrade handler sees it: a refusal it writes is replaced by the kept response. */
  wrapServer<S extends { on(event: 'upgrade', listener: UpgradeListener): unknown }>(server: S): S {
    const wrapped = Object.create(server) as S;
    wrapped.on = (event: 'upgrade', listener: UpgradeListener) =>
      server.on(event, (request, socket, head) => {
        const end = socket.end.bind(socket) as (chunk: string) => void;
        socket.end = ((chunk?: unknown) => {
          const refusal = this.#responses.get(request);
          if (refusal === undefined) return (end as (c?: unknown) => Duplex)(chunk);
          this.#responses.delete(request);
          // Node drops its own error handling on upgrade sockets; a client gone mid-write must not crash us.
          const fail = (error: unknown) => {
            logUnlessTeardown(log, error, 'writing an upgrade refusal failed');
            socket.destroy();
          };
          socket.on('error', fail);
          writeResponse(refusal, end).catch(fail);
          return socket;
        }) as Duplex['end'];
        listener(request, socket, head);
      });
    return wrapped;
  }
}

async function writeResponse(response: Response, end: (chunk: string) => void): Promise<void> {
  const body = await response.text();
  const lines = [`HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? ''}`, 'Connection: close'];
  lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  response.headers.forEach((value, name) => {
    if (!SKIPPED.has(name) && !/[\r\n]/.test(value)) lines.push(`${name}: ${value}`);
  });
  end(`${lines.join('\r\n')}\r\n\r\n${body}`);
}
