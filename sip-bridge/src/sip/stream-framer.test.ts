import { describe, expect, it } from 'vitest';
import { StreamFramer } from './stream-framer.ts';

const head = (length: string | null) =>
  `OPTIONS sip:x@h SIP/2.0\r\nVia: SIP/2.0/TCP h;branch=z9hG4bK1\r\n${length === null ? '' : `Content-Length: ${length}\r\n`}\r\n`;

describe('SIP stream framing', () => {
  it('cuts messages by Content-Length across chunks, skipping keepalive CRLFs', () => {
    const framer = new StreamFramer();
    const text = `\r\n${head('2')}ab${head('0')}`;
    expect(framer.push(Buffer.from(text.slice(0, 30))).messages).toEqual([]);
    const { messages, error } = framer.push(Buffer.from(text.slice(30)));
    expect(error).toBeUndefined();
    expect(messages.map((m) => m.toString())).toEqual([`${head('2')}ab`, head('0')]);
  });

  it('gives the header block and a status with an error, so the request can be answered before the close', () => {
    expect(new StreamFramer().push(Buffer.from(head(null)))).toMatchObject({
      error: 'Content-Length is required on a stream transport',
      status: 400,
      head: Buffer.from(head(null)),
    });
    expect(new StreamFramer().push(Buffer.from(head('99999999')))).toMatchObject({ status: 413 });
    const twice = head('0').replace('\r\n\r\n', '\r\nl: 7\r\n\r\n');
    expect(new StreamFramer().push(Buffer.from(twice))).toMatchObject({ error: 'conflicting Content-Length headers' });
    const unframed = new StreamFramer().push(Buffer.alloc(70_000, 65));
    expect([unframed.status, unframed.head]).toEqual([413, undefined]);
  });
});
