import { describe, expect, it } from 'vitest';
import { createEdgeApp, REALTIME_PATH } from './app.ts';
import { isAcceptedKey, presentedApiKey } from './auth/api-key-auth.ts';
import { FakeWorkerLink } from './testing/fake-worker-link.ts';

describe('createEdgeApp', () => {
  it('answers health checks', async () => {
    const { app } = createEdgeApp({ link: new FakeWorkerLink() });
    const response = await app.request('/healthz');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
  });

  it('serves the console page, which connects to the realtime route', async () => {
    const { app } = createEdgeApp({ link: new FakeWorkerLink() });
    const response = await app.request('/');
    expect(response.headers.get('content-type')).toContain('text/html');
    const html = await response.text();
    expect(html).toContain('<textarea');
    expect(html).toContain(REALTIME_PATH);
  });

  it('rejects the realtime route without a configured key (401) and lets a keyed request through', async () => {
    const { app } = createEdgeApp({ link: new FakeWorkerLink(), apiKeys: ['sk-one', 'sk-two'] });
    const denied = await app.request(REALTIME_PATH);
    expect(denied.status).toBe(401);
    expect(await denied.json()).toMatchObject({ error: { code: 'unauthorized' } });
    expect((await app.request(REALTIME_PATH, { headers: { authorization: 'Bearer sk-wrong' } })).status).toBe(401);
    // No adapter mounted the upgrade here, so an accepted request falls through to 404.
    expect((await app.request(REALTIME_PATH, { headers: { authorization: 'Bearer sk-two' } })).status).toBe(404);
    expect((await app.request(`${REALTIME_PATH}?api_key=sk-one`)).status).toBe(404);
    const subprotocol = { 'sec-websocket-protocol': 'realtime, openai-insecure-api-key.sk-one' };
    expect((await app.request(REALTIME_PATH, { headers: subprotocol })).status).toBe(404);
  });

  it('checks no key when none are configured', async () => {
    const { app } = createEdgeApp({ link: new FakeWorkerLink() });
    expect((await app.request(REALTIME_PATH)).status).toBe(404);
  });

  it('refuses an invalid default config up front', () => {
    expect(() => createEdgeApp({ link: new FakeWorkerLink(), defaultConfig: { chunkMs: 1 } })).toThrow(/defaultConfig/);
  });
});

describe('API keys', () => {
  const carrier = (headers: Record<string, string>, query: Record<string, string> = {}) => ({
    header: (name: string) => headers[name],
    query: (name: string) => query[name],
  });

  it('finds the key in the header, the query or the subprotocol', () => {
    expect(presentedApiKey(carrier({ authorization: 'Bearer abc' }))).toBe('abc');
    expect(presentedApiKey(carrier({}, { api_key: 'def' }))).toBe('def');
    expect(presentedApiKey(carrier({ 'sec-websocket-protocol': 'realtime, openai-insecure-api-key.ghi' }))).toBe('ghi');
    expect(presentedApiKey(carrier({ authorization: 'Basic abc' }))).toBeUndefined();
  });

  it('accepts only exact keys', () => {
    expect(isAcceptedKey('sk-1', ['sk-0', 'sk-1'])).toBe(true);
    expect(isAcceptedKey('sk-', ['sk-1'])).toBe(false);
    expect(isAcceptedKey('sk-11', ['sk-1'])).toBe(false);
    expect(isAcceptedKey('', ['sk-1'])).toBe(false);
  });
});
