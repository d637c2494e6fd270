// Regression: `DELETE /v1/keys/:id` and `GET /v1/realtime?call_id=` answered another tenant's id
// with 403 and an unknown id with 404, so any tenant could probe which ids exist. Both now answer
// another tenant's id exactly as an unknown one: the same 404, code and message shape.
import { describe, expect, it } from 'vitest';
import { createEdgeApp } from '../app.ts';
import { FakeWorkerLink } from '../testing/fake-worker-link.ts';
import { EdgeAuth } from './edge-auth.ts';

const ADMIN = 'sk-admin-id-leak-test';

async function twoTenants() {
  const auth = new EdgeAuth({ adminKey: ADMIN });
  const edge = createEdgeApp({ link: new FakeWorkerLink(), auth });
  const issue = async (tenant: string, scopes: string[]) => {
    const response = await edge.app.request('/v1/keys', {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tenant, scopes }),
    });
    expect(response.status).toBe(201);
    return (await response.json()) as { id: string; key: string };
  };
  const acme = await issue('acme', ['admin', 'realtime']);
  const globex = await issue('globex', ['admin', 'realtime']);
  return { auth, edge, acme, globex };
}

/** Status and error body with the id itself replaced, so the two answers can be compared whole. */
async function answer(response: Response, id: string) {
  const body = JSON.stringify(await response.json()).replaceAll(id, '<id>');
  return { status: response.status, body };
}

describe("other tenants' ids leak through status codes", () => {
  it("DELETE /v1/keys/:id answers another tenant's key as an unknown one, and leaves it alone", async () => {
    const { edge, acme, globex } = await twoTenants();
    const asAcme = { method: 'DELETE', headers: { authorization: `Bearer ${acme.key}` } };
    const theirs = await answer(await edge.app.request(`/v1/keys/${globex.id}`, asAcme), globex.id);
    const unknownId = `${globex.id.slice(0, -4)}zzzz`;
    const unknown = await answer(await edge.app.request(`/v1/keys/${unknownId}`, asAcme), unknownId);
    expect(theirs.status).toBe(404);
    expect(theirs).toEqual(unknown);
    // Still usable: the refusal revoked nothing.
    const listed = await edge.app.request('/v1/keys', { headers: { authorization: `Bearer ${globex.key}` } });
    expect(listed.status).toBe(200);
    // The same holds for rotation, which finds keys the same way.
    const rotate = { ...asAcme, method: 'POST' };
    const rotated = await answer(await edge.app.request(`/v1/keys/${globex.id}/rotate`, rotate), globex.id);
    expect(rotated.status).toBe(404);
  });

  it("GET /v1/realtime?call_id= answers another tenant's live session as an unknown one", async () => {
    const { edge, acme } = await twoTenants();
    edge.tenancy.quotas.openSession('globex', 'sess_globex');
    const ask = (callId: string) =>
      edge.app.request(`/v1/realtime?call_id=${callId}`, { headers: { authorization: `Bearer ${acme.key}` } });
    const theirs = await answer(await ask('sess_globex'), 'sess_globex');
    const unknown = await answer(await ask('sess_nobody'), 'sess_nobody');
    expect(theirs.status).toBe(404);
    expect(theirs).toEqual(unknown);
  });
});
