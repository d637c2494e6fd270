import { describe, expect, it } from 'vitest';
import { DigestAuth } from './digest.ts';
import { answerChallenge } from './digest-client.ts';

describe('answerChallenge (the bridge as UAC answering 401/407)', () => {
  it('answers a challenge so that the server side of digest accepts it, and a wrong password is refused', () => {
    const server = new DigestAuth({ realm: 'carrier' });
    const request = { method: 'INVITE', uri: 'sip:+15550100@127.0.0.1:5080' };
    const good = answerChallenge(server.challenge(), request, { username: 'venus', password: 's3cret' });
    expect(server.verify(good, 'INVITE', 'venus', 's3cret')).toBe('ok');
    const bad = answerChallenge(server.challenge(), request, { username: 'venus', password: 'wrong' });
    expect(server.verify(bad, 'INVITE', 'venus', 's3cret')).toBe('wrong');
  });

  it('declines challenges it cannot answer', () => {
    const creds = { username: 'u', password: 'p' };
    expect(answerChallenge('Basic realm="x"', { method: 'INVITE', uri: 'sip:a@b' }, creds)).toBeUndefined();
    expect(
      answerChallenge('Digest realm="x", nonce="n", algorithm=SHA-256', { method: 'INVITE', uri: 'sip:a@b' }, creds),
    ).toBeUndefined();
  });
});
