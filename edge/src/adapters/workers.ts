/**
 * Placeholder Cloudflare Workers entry (see wrangler.toml). It is not implemented yet and answers
 * every request with 501. The plan: the Worker authenticates and routes each `/v1/realtime` upgrade
 * to a `RealtimeSession` Durable Object (one per session), which accepts a hibernating WebSocket,
 * keeps its connection state in `serializeAttachment`, and feeds it to the same RealtimeConnection
 * core the Node adapter uses, over a WorkerLink that reaches a GPU worker.
 */
const NOT_IMPLEMENTED = 'the Workers edge adapter is not implemented yet; run the Node edge (serveEdgeNode)';

function notImplemented(): Response {
  return new Response(NOT_IMPLEMENTED, { status: 501, headers: { 'content-type': 'text/plain' } });
}

/** Durable Object class bound as REALTIME_SESSION. */
export class RealtimeSession {
  fetch(_request: Request): Response {
    return notImplemented();
  }
}

export default {
  fetch(_request: Request): Response {
    return notImplemented();
  },
};
