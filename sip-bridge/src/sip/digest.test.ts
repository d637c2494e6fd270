import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DigestAuth, parseDigest } from './digest.ts';

const md5 = (t: string) => createHash('md5').update(t).digest('hex');

/** What a UA computes from a challenge (RFC 2617 §3.2.2, qop=auth). */
function answer(challenge: string, user: string, password: string, method: string, uri: string): string {
  const c = parseDigest(challenge)!;
  const ha1 = md5(`${user}:${c.realm}:${password}`);
  const ha2 = md5(`${method}:${uri}`);
  const response = md5(`${ha1}:${c.nonce}:00000001:abc:auth:${ha2}`);
  return `Digest username="${user}", realm="${c.realm}", nonce="${c.nonce}", uri="${uri}", response="${response}", algorithm=MD5, qop=auth, nc=00000001, cnonce="abc"`;
}

describe('digest authentication', () => {
  it('accepts the right password, refuses a wrong one or another user, asks again for a missing one', () => {
    const auth = new DigestAuth({ realm: 'venus' });
    const challenge = auth.challenge();
    expect(challenge).toMatch(/^Digest realm="venus", nonce="[^"]+", algorithm=MD5, qop="auth"$/);
    const uri = 'sip:1000@127.0.0.1';
    expect(auth.verify(answer(challenge, 'trunk', 's3cret', 'INVITE', uri), 'INVITE', 'trunk', 's3cret')).toBe('ok');
    expect(auth.verify(answer(challenge, 'trunk', 'guess', 'INVITE', uri), 'INVITE', 'trunk', 's3cret')).toBe('wrong');
    expect(auth.verify(answer(challenge, 'other', 's3cret', 'INVITE', uri), 'INVITE', 'trunk', 's3cret')).toBe('wrong');
    expect(auth.verify(answer(challenge, 'trunk', 's3cret', 'INVITE', uri), 'BYE', 'trunk', 's3cret')).toBe('wrong');
    expect(auth.verify(undefined, 'INVITE', 'trunk', 's3cret')).toBe('missing');
  });

  it('refuses a nonce it did not sign, or one past its lifetime, as stale', () => {
    let now = 1_000_000;
    const auth = new DigestAuth({ realm: 'venus', nonceLifetimeMs: 1000, now: () => now });
    const challenge = auth.challenge();
    const forged = challenge.replace(/nonce="[^"]+"/, 'nonce="abc.def"');
    expect(auth.verify(answer(forged, 'u', 'p', 'INVITE', 'sip:x@h'), 'INVITE', 'u', 'p')).toBe('stale');
    now += 2000;
    expect(auth.verify(answer(challenge, 'u', 'p', 'INVITE', 'sip:x@h'), 'INVITE', 'u', 'p')).toBe('stale');
  });
});
