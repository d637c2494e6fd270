// Regression: `POST /v1/realtime/calls` with a 300 MB chunked body was read whole before its
// 64 KB check, which trusted `Content-Length` alone (RSS +780 MB); the auth routes' limit answered
// `invalid_arguments`. Every body the edge reads is now counted as it streams in and cut off with
// 413 `payload_too_large`: these tests count the bytes the server actually pulled.
import { request as httpRequest } from 'node:http';
import type { FunctionsCatalog } from '@venus/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { type NodeEdgeServer, serveEdgeNode } from '../adapters/node.ts';
import { createEdgeApp } from '../app.ts';
import { EdgeAuth } from '../auth/edge-auth.ts';
import { FakeWorkerLink } from '../testing/fake-worker-link.ts';
import { mountWebRtcRoutes } from '../webrtc/webrtc-routes.ts';
import { MAX_REQUEST_BYTES } from './body-limit.ts';

const ADMIN = 'sk-admin-body-limit-test';
const CHUNK = 16 * 1024;
/** What a buffering server would have read: far past any limit, so reading it all fails the test. */
const ATTACK_BYTES = 300 * 1024 * 1024;

/** A body with no length that yields its chunks only when read, counting what was pulled. */
function countedBody(contentType: string) {
  const pulled = { bytes: 0 };
  const chunk = new Uint8Array(CHUNK).fill(0x61);
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pulled.bytes >= ATTACK_BYTES) return controller.close();
        pulled.bytes += CHUNK;
        controller.enqueue(chunk);
      },
    },
    { highWaterMark: 0 },
  );
  return { body, pulled, headers: { 'content-type': contentType, authorization: `Bearer ${ADMIN}` } };
}

let server: NodeEdgeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('unbounded request bodies', () => {
  it('every route that takes a body refuses a chunked body past its limit without reading the rest', async () => {
    const edge = createEdgeApp({
      link: new FakeWorkerLink(),
      auth: new EdgeAuth({ adminKey: ADMIN }),
      // The limit runs before any handler reaches the catalog: a catalog call would fail the route.
      functions: {} as FunctionsCatalog,
    });
    const calls = mountWebRtcRoutes(edge.app, edge, { iceAddress: '127.0.0.1' });
    try {
      const routes = edge.app.routes.filter((route) => ['POST', 'PUT', 'PATCH'].includes(route.method));
      // The scan must see the routes, or this test could not fail.
      expect(routes.map((route) => route.path)).toEqual(
        expect.arrayContaining(['/v1/keys', '/v1/realtime/calls', '/v1/realtime/client_secrets']),
      );
      const answers: string[] = [];
      for (const path of new Set(routes.map((route) => route.path.replaceAll(/:[a-z]+/gi, 'x')))) {
        const method = routes.find((route) => route.path.replaceAll(/:[a-z]+/gi, 'x') === path)!.method;
        const type = path.endsWith('/calls') || path === '/v1/realtime' ? 'application/sdp' : 'application/json';
        const { body, pulled, headers } = countedBody(type);
        const response = await edge.app.request(path, { method, body, headers, duplex: 'half' } as RequestInit);
        const json = (await response.json()) as { error?: { code?: string } };
        answers.push(`${method} ${path} ${response.status} ${json.error?.code}`);
        expect(pulled.bytes, `${method} ${path}`).toBeLessThanOrEqual(MAX_REQUEST_BYTES + CHUNK);
      }
      expect(answers.filter((answer) => !answer.endsWith(' 413 payload_too_large'))).toEqual([]);
    } finally {
      calls.close();
    }
  });

  it('a real chunked POST /v1/realtime/calls is answered 413 while the client is still sending', async () => {
    server = await serveEdgeNode({ link: new FakeWorkerLink(), port: 0, auth: new EdgeAuth({ adminKey: ADMIN }) });
    const url = new URL('/v1/realtime/calls', server.url);
    const chunk = Buffer.alloc(CHUNK, 0x61);
    const result = await new Promise<{ status: number; code: string; sentBytes: number }>((resolve, reject) => {
      let sent = 0;
      let answered = false;
      const req = httpRequest(url, {
        method: 'POST',
        headers: { 'content-type': 'application/sdp', authorization: `Bearer ${ADMIN}` },
      });
      req.on('error', (error) => (answered ? undefined : reject(error)));
      req.on('response', (response) => {
        answered = true;
        const parts: Buffer[] = [];
        response.on('data', (part: Buffer) => parts.push(part));
        response.on('end', () => {
          const json = JSON.parse(Buffer.concat(parts).toString()) as { error: { code: string } };
          resolve({ status: response.statusCode ?? 0, code: json.error.code, sentBytes: sent });
          req.destroy();
        });
      });
      // Chunked (no Content-Length): keep sending until the server answers or the 300 MB are out.
      const pump = () => {
        while (!answered && sent < ATTACK_BYTES) {
          sent += CHUNK;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        if (!answered) req.end();
      };
      pump();
    });
    expect(result.status).toBe(413);
    expect(result.code).toBe('payload_too_large');
    // Answered mid-body: the server never waited for (or held) the whole body.
    expect(result.sentBytes).toBeLessThan(ATTACK_BYTES);
  });
});
