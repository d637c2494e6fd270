// Regression: sessions opened with an API key kept running after that key was revoked. Now the
// revoking edge ends that key's live sessions at once (an `unauthorized` error event, the worker
// session closed, the socket closed 1008), and every other edge sharing the key store ends them at
// its next re-check of live keys (every KEY_RECHECK_MS; the test runs the re-check itself).
import { describe, expect, it } from 'vitest';
import { createEdgeApp } from '../app.ts';
import { FakeTransport } from '../testing/fake-transport.ts';
import { FakeWorkerLink } from '../testing/fake-worker-link.ts';
import { EdgeAuth } from './edge-auth.ts';
import { InMemoryKeyStore } from './in-memory-key-store.ts';

const ADMIN = 'sk-admin-revocation-test';
const SECRET = 'a-shared-deployment-secret';

/** Two edges of one deployment: the same secret and key store (as Redis would share it). */
function twoEdges() {
  const store = new InMemoryKeyStore();
  const edges = [0, 1].map((i) => {
    const link = new FakeWorkerLink();
    const auth = new EdgeAuth({ adminKey: ADMIN, secret: SECRET, store });
    let n = 0;
    const edge = createEdgeApp({ link, auth, newSessionId: () => `sess_${i}_${++n}` });
    const open = async (key: string) => {
      const verified = await auth.authenticate(key);
      if (!verified.ok) throw new Error(verified.message);
      const transport = new FakeTransport();
      const connection = edge.openRealtime(transport, verified.principal.tenant, { principal: verified.principal });
      return { transport, connection };
    };
    return { link, auth, edge, open };
  });
  return edges as [(typeof edges)[0], (typeof edges)[0]];
}

async function issueKey(edge: ReturnType<typeof twoEdges>[0]) {
  const response = await edge.edge.app.request('/v1/keys', {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tenant: 'acme', scopes: ['realtime'] }),
  });
  return (await response.json()) as { id: string; key: string };
}

const revoke = (edge: ReturnType<typeof twoEdges>[0], id: string) =>
  edge.edge.app.request(`/v1/keys/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN}` } });

describe('revoked key sessions keep running', () => {
  it("ends the revoked key's sessions on the revoking edge at once, and only those", async () => {
    const [a] = twoEdges();
    const revoked = await issueKey(a);
    const kept = await issueKey(a);
    const first = await a.open(revoked.key);
    const { value: token } = await a.auth.tokens.mint({
      tenant: 'acme',
      scopes: ['realtime'],
      keyId: revoked.id,
      expiresAt: Date.now() + 60_000,
    });
    const viaToken = await a.open(token);
    const other = await a.open(kept.key);
    expect(a.auth.sessions.size).toBe(3);

    expect((await revoke(a, revoked.id)).status).toBe(200);
    for (const { transport, connection } of [first, viaToken]) {
      expect(connection.closed).toBe(true);
      expect(transport.closedWith?.code).toBe(1008);
      expect(transport.ofType('error').at(-1)?.error).toMatchObject({ code: 'unauthorized' });
    }
    expect(a.link.framesOf('close').map((frame) => frame.session)).toEqual([
      first.connection.sessionId,
      viaToken.connection.sessionId,
    ]);
    expect(other.connection.closed).toBe(false);
    expect(a.auth.sessions.size).toBe(1);
    other.connection.handleClose(1000);
    expect(a.auth.sessions.size).toBe(0);
  });

  it('ends them on another edge sharing the key store at its next re-check', async () => {
    const [a, b] = twoEdges();
    const key = await issueKey(a);
    const onB = await b.open(key.key);
    expect(await b.auth.sessions.recheck()).toBe(0);
    expect(onB.connection.closed).toBe(false);

    await revoke(a, key.id);
    expect(onB.connection.closed).toBe(false); // B has not looked yet
    expect(await b.auth.sessions.recheck()).toBe(1);
    expect(onB.connection.closed).toBe(true);
    expect(onB.transport.closedWith?.code).toBe(1008);
    expect(onB.transport.ofType('error').at(-1)?.error).toMatchObject({ code: 'unauthorized' });
  });
});
