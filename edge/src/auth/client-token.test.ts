import { describe, expect, it } from 'vitest';
import { ClientTokens } from './client-token.ts';
import { KeyedHash } from './keyed-hash.ts';

const SECRET = 'a-deployment-secret-of-some-length';

describe('ClientTokens', () => {
  const claims = { tenant: 'acme', keyId: 'k1', scopes: ['realtime' as const], expiresAt: 2_000 };

  it('round-trips tenant, scopes, expiry and session settings until the expiry', async () => {
    let now = 1_000_000;
    const tokens = new ClientTokens(KeyedHash.create(SECRET, 'client-token'), () => now);
    const { value } = await tokens.mint({ ...claims, session: { instructions: 'be brief' } });
    expect(value).toMatch(/^ek_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(await tokens.check(value)).toMatchObject({
      ok: true,
      claims: { ...claims, session: { instructions: 'be brief' } },
    });
    now = 2_000_000;
    expect(await tokens.check(value)).toMatchObject({ ok: false, reason: 'expired' });
  });

  it('calls a token signed with another secret, or with altered claims, forged', async () => {
    const ours = new ClientTokens(KeyedHash.create(SECRET, 'client-token'), () => 0);
    const theirs = new ClientTokens(KeyedHash.create(`${SECRET}-other`, 'client-token'), () => 0);
    const { value } = await theirs.mint(claims);
    expect(await ours.check(value)).toMatchObject({ ok: false, reason: 'forged' });

    const genuine = (await ours.mint(claims)).value;
    const [payload, mac] = genuine.slice(3).split('.') as [string, string];
    const altered = JSON.parse(Buffer.from(payload, 'base64url').toString());
    altered.t = 'other-tenant';
    const tampered = `ek_${Buffer.from(JSON.stringify(altered)).toString('base64url')}.${mac}`;
    expect(await ours.check(tampered)).toMatchObject({ ok: false, reason: 'forged' });
    expect(await ours.check('ek_nonsense')).toMatchObject({ ok: false, reason: 'invalid' });
  });

  it('does not accept a token signed for another purpose of the same secret', async () => {
    const tokens = new ClientTokens(KeyedHash.create(SECRET, 'client-token'), () => 0);
    const otherPurpose = new ClientTokens(KeyedHash.create(SECRET, 'api-key-hash'), () => 0);
    expect(await tokens.check((await otherPurpose.mint(claims)).value)).toMatchObject({ reason: 'forged' });
  });
});
