import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FunctionContext } from '../function-definition.ts';
import { createBuiltinFunctions } from './builtin-functions.ts';
import { createWebFetch } from './web-fetch.ts';

function context(signal = new AbortController().signal): FunctionContext {
  return { signal, progress: () => {}, session: 's1', workId: 'w1' };
}

let server: Server;
let base: string;
let host: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/page') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        '<html><head><title>Status &amp; News</title><style>p{}</style></head><body><p>All systems go.</p><script>x()</script></body></html>',
      );
    } else if (req.url === '/big') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('a'.repeat(10_000));
    } else if (req.url === '/away') {
      res.writeHead(302, { location: 'http://example.com/' }).end();
    } else if (req.url === '/hop') {
      res.writeHead(302, { location: '/page' }).end();
    } else if (req.url === '/slow') {
      // Never answers (afterAll closes the connection): the fetch can only end by its own timeout,
      // however late a loaded machine runs that timer.
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  base = `http://${host}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('web_fetch', () => {
  it('reads an allowed page as text with its title', async () => {
    const output = await createWebFetch({ allowHosts: [host] }).run({ url: `${base}/page` }, context());
    expect(output.speech).toBe('Status & News: All systems go.');
    expect(output.data).toMatchObject({
      status: 200,
      title: 'Status & News',
      text: 'All systems go.',
      truncated: false,
    });
  });

  it('refuses hosts outside the allow list, also behind a redirect', async () => {
    const webFetch = createWebFetch({ allowHosts: [host] });
    await expect(webFetch.run({ url: 'http://example.com/' }, context())).rejects.toMatchObject({
      code: 'function_failed',
    });
    await expect(webFetch.run({ url: `${base}/away` }, context())).rejects.toThrow(
      /not allowed to read pages from example\.com/,
    );
    expect((await webFetch.run({ url: `${base}/hop` }, context())).speech).toContain('All systems go.');
  });

  it('cuts responses at maxBytes and gives up at timeoutMs', async () => {
    const webFetch = createWebFetch({ allowHosts: [host], maxBytes: 100, timeoutMs: 200 });
    const big = await webFetch.run({ url: `${base}/big` }, context());
    expect(big.data).toMatchObject({ truncated: true, text: 'a'.repeat(100) });
    await expect(webFetch.run({ url: `${base}/slow` }, context())).rejects.toMatchObject({ code: 'function_timeout' });
  });

  it('keeps its deadline when the fetch ignores its signal (fake fetch that never settles)', async () => {
    const neverSettles: typeof fetch = () => new Promise<Response>(() => {});
    const webFetch = createWebFetch({ allowHosts: [host], timeoutMs: 50, fetch: neverSettles });
    await expect(webFetch.run({ url: `${base}/page` }, context())).rejects.toMatchObject({ code: 'function_timeout' });
    const caller = new AbortController();
    const pending = createWebFetch({ allowHosts: [host], fetch: neverSettles }).run(
      { url: `${base}/page` },
      context(caller.signal),
    );
    caller.abort(new Error('caller went away'));
    await expect(pending).rejects.toThrow('caller went away');
  });

  it('extracts a URL from the query', () => {
    const webFetch = createWebFetch({ allowHosts: [host] });
    expect(webFetch.extract(`please read ${base}/page.`)).toEqual({ url: `${base}/page` });
    expect(webFetch.extract('what is the weather')).toBeNull();
  });

  it('is registered only when an allow list is given', () => {
    expect(createBuiltinFunctions().map((fn) => fn.name)).toEqual([
      'world_clock',
      'calculator',
      'weather',
      'work_status',
    ]);
    const names = createBuiltinFunctions({ webFetch: { allowHosts: [host] }, notes: {} }).map((fn) => fn.name);
    expect(names).toEqual(['world_clock', 'calculator', 'weather', 'work_status', 'web_fetch', 'notes']);
    expect(() => createWebFetch({ allowHosts: [] })).toThrow(/at least one allowed host/);
  });
});
