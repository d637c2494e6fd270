import { describe, expect, it } from 'vitest';
import { cseq, header, parseMessage, responseTo, SIP_LIMITS, serialise, tagOf, topVia, uriUser } from './message.ts';

const invite = (extra = '', body = 'v=0\r\n') =>
  Buffer.from(
    'INVITE sip:1000@127.0.0.1:5070 SIP/2.0\r\n' +
      'v: SIP/2.0/UDP 127.0.0.1:5071;branch=z9hG4bK-1;rport\r\n' +
      'f: "Caller" <sip:alice@127.0.0.1>;tag=abc\r\n' +
      't: <sip:1000@127.0.0.1>\r\n' +
      'i: call-1\r\n' +
      'CSeq: 1 INVITE\r\n' +
      'Max-Forwards: 70\r\n' +
      extra +
      `l: ${body.length}\r\n\r\n${body}`,
    'latin1',
  );

describe('SIP message parsing', () => {
  it('reads a request with compact headers, its CSeq, tags, Via and dialled number', () => {
    const parsed = parseMessage(invite());
    expect(parsed.ok).toBe(true);
    if (!parsed.ok || parsed.message.kind !== 'request') return;
    const m = parsed.message;
    expect(m.method).toBe('INVITE');
    expect(header(m, 'Call-ID')).toBe('call-1');
    expect(cseq(m)).toEqual({ seq: 1, method: 'INVITE' });
    expect(tagOf(header(m, 'from'))).toBe('abc');
    expect(tagOf(header(m, 'to'))).toBeUndefined();
    expect(topVia(m)).toMatchObject({ transport: 'UDP', host: '127.0.0.1', port: 5071, branch: 'z9hG4bK-1' });
    expect(uriUser(m.uri)).toBe('1000');
    expect(m.body).toBe('v=0\r\n');
  });

  it('serialises what it parses and answers with the request headers copied', () => {
    const parsed = parseMessage(invite());
    if (!parsed.ok || parsed.message.kind !== 'request') throw new Error('parse failed');
    const again = parseMessage(serialise(parsed.message));
    expect(again).toEqual(parsed);
    const response = responseTo(parsed.message, 180, 'Ringing', { toTag: 'xyz' });
    const back = parseMessage(serialise(response));
    expect(back.ok && back.message.kind === 'response' && back.message.status).toBe(180);
    expect(back.ok && tagOf(header(back.message, 'to'))).toBe('xyz');
    expect(back.ok && header(back.message, 'via')).toContain('branch=z9hG4bK-1');
  });

  it.each([
    ['a Content-Length beyond the body', invite('', 'v=0\r\n').toString('latin1').replace('l: 5', 'l: 500'), 400],
    ['a huge Content-Length', invite().toString('latin1').replace('l: 5', 'l: 99999999'), 413],
    ['a non-numeric Content-Length', invite().toString('latin1').replace('l: 5', 'l: five'), 400],
    ['a missing Call-ID', invite().toString('latin1').replace('i: call-1\r\n', ''), 400],
    ['a duplicated CSeq', invite('CSeq: 2 INVITE\r\n').toString('latin1'), 400],
    ['a CSeq method that differs', invite().toString('latin1').replace('1 INVITE', '1 BYE'), 400],
    ['too many headers', invite('X-A: 1\r\n'.repeat(SIP_LIMITS.maxHeaders + 1)).toString('latin1'), 400],
    ['a malformed header line', invite('no colon here\r\n').toString('latin1'), 400],
  ])('refuses %s with a status to answer and the request to answer it', (_what, text, status) => {
    const parsed = parseMessage(Buffer.from(text, 'latin1'));
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.status).toBe(status);
    expect(parsed.reason.length).toBeGreaterThan(0);
  });

  it('answers a request whose bad header lines are not the mandatory ones, naming the line in printable form', () => {
    const long = invite(`Subject: ${'a'.repeat(SIP_LIMITS.maxHeaderLineBytes + 1)}\r\n`);
    const many = invite('X-A: 1\r\n'.repeat(SIP_LIMITS.maxHeaders + 1));
    const binary = invite('X-\u0000\u00ff"q: v\r\n');
    for (const bytes of [long, many, binary]) {
      const parsed = parseMessage(bytes);
      expect(parsed).toMatchObject({ ok: false, status: 400, request: { method: 'INVITE' } });
    }
    const parsed = parseMessage(binary);
    expect(!parsed.ok && parsed.reason).toBe('malformed header line "X-\\x00\\xff\\x22q: v"');
  });

  it('refuses without a request to answer when the start line or headers are unusable', () => {
    for (const text of ['garbage', 'FOO\r\n\r\n', 'INVITE sip:x SIP/3.0\r\nVia: x\r\n\r\n', '\r\n\r\n']) {
      const parsed = parseMessage(Buffer.from(text));
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.request).toBeUndefined();
    }
    expect(parseMessage(Buffer.alloc(SIP_LIMITS.maxMessageBytes + 1, 65))).toMatchObject({ ok: false, status: 413 });
  });

  it('reads the dialled number of sip:, sips: and tel: URIs', () => {
    expect(uriUser('sip:%2B4930123@example.com;user=phone')).toBe('+4930123');
    expect(uriUser('<sips:support@example.com>')).toBe('support');
    expect(uriUser('tel:+1-555-0100')).toBe('+1-555-0100');
    expect(uriUser('sip:example.com')).toBeUndefined();
  });
});
