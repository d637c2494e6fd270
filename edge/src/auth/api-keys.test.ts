import { describe, expect, it } from 'vitest';
import { ApiKeys } from './api-keys.ts';
import { InMemoryKeyStore } from './in-memory-key-store.ts';
import { KeyedHash } from './keyed-hash.ts';

const hash = () => KeyedHash.create('a-deployment-secret-of-some-length', 'api-key-hash');

describe('ApiKeys', () => {
  it('stores a keyed hash, never the key, and verifies the key to its tenant and scopes', async () => {
    const store = new InMemoryKeyStore();
    const keys = new ApiKeys({ store, hash: hash() });
    const { key, record } = await keys.issue({ tenant: 'acme', scopes: ['usage:read', 'realtime', 'realtime'] });
    expect(key).toMatch(new RegExp(`^vk_${record.id}_[A-Za-z0-9_-]{43}$`));
    expect(JSON.stringify(await store.list())).not.toContain(key.slice(`vk_${record.id}_`.length));
    expect(record.scopes).toEqual(['realtime', 'usage:read']);
    expect(await keys.verify(key)).toMatchObject({ ok: true, principal: { tenant: 'acme', keyId: record.id } });
    expect(await keys.verify(`${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`)).toMatchObject({
      reason: 'invalid',
    });
  });

  it('keeps a rotated key valid until its grace ends, and refuses revoked keys', async () => {
    let now = 1000;
    const keys = new ApiKeys({ store: new InMemoryKeyStore(), hash: hash(), now: () => now });
    const old = await keys.issue({ tenant: 'acme', scopes: ['realtime'], name: 'svc' });
    const rotated = await keys.rotate(old.record.id, now + 60_000);
    expect(rotated?.issued.record).toMatchObject({ name: 'svc', scopes: ['realtime'], rotatedFrom: old.record.id });
    expect(rotated?.previous.rotatedTo).toBe(rotated?.issued.record.id);
    expect((await keys.verify(old.key)).ok).toBe(true);
    now += 60_000;
    expect(await keys.verify(old.key)).toMatchObject({ ok: false, reason: 'expired' });
    await keys.revoke(rotated!.issued.record.id);
    expect(await keys.verify(rotated!.issued.key)).toMatchObject({ ok: false, reason: 'revoked' });
  });

  it('checks static keys from the environment in full', async () => {
    const keys = new ApiKeys({
      store: new InMemoryKeyStore(),
      hash: hash(),
      staticKeys: [{ key: 'sk-local', tenant: 'default', scopes: ['realtime'], operator: false, id: 'env_1' }],
    });
    expect(await keys.verify('sk-local')).toMatchObject({ ok: true, principal: { keyId: 'env_1' } });
    expect((await keys.verify('sk-loca')).ok).toBe(false);
    expect((await keys.verify('sk-local2')).ok).toBe(false);
  });
});
