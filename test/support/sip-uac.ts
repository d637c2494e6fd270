import type { Socket } from 'node:dgram';
import { until } from './until.ts';

const WAIT_MS = 120_000;

/**
 * A minimal SIP caller (UAC) over UDP of our own, for tests and benches that need a call whose RTP
 * goes to a socket they hold: INVITE with an SDP offer (PCMU, telephone-event) naming `rtpPort`,
 * ACK of the 200, in-dialog MESSAGE (text to the session) and BYE. Not a SIP stack: one call per
 * instance, answers matched by CSeq.
 */
export class SipUac {
  readonly #sip: Socket;
  readonly #bridge: string;
  readonly #callId: string;
  #answers = '';
  #to = '';
  #seq = 1;
  /** The bridge's RTP port from its SDP answer. */
  mediaPort = 0;
  /** Milliseconds from sending the INVITE to its 200 arriving. */
  setupMs = 0;

  constructor(sip: Socket, bridgeTarget: string, callId: string) {
    this.#sip = sip;
    this.#bridge = bridgeTarget;
    this.#callId = callId;
    sip.on('message', (m: Buffer) => {
      const text = m.toString('latin1');
      if (text.includes(`Call-ID: ${callId}\r\n`)) this.#answers += text;
    });
  }

  async invite(number: string, rtpPort: number): Promise<void> {
    const sdp =
      'v=0\r\no=uac 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n' +
      `m=audio ${rtpPort} RTP/AVP 0 101\r\na=rtpmap:101 telephone-event/8000\r\n`;
    const started = performance.now();
    this.#send('INVITE', `<sip:${number}@${this.#bridge}>`, sdp, number);
    await until('the call is answered', () => /SIP\/2\.0 200[\s\S]*m=audio (\d+)/.test(this.#answers), WAIT_MS);
    this.setupMs = performance.now() - started;
    this.#to = /^To: ([^\r\n]*)/im.exec(this.#answers.slice(this.#answers.indexOf('SIP/2.0 200')))![1]!;
    this.mediaPort = Number(/m=audio (\d+)/.exec(this.#answers)![1]);
    this.#send('ACK', this.#to, '', number, 1);
  }

  /** An in-dialog MESSAGE: the session gets `text` as the caller's typed words. */
  async message(text: string): Promise<number> {
    return this.#request('MESSAGE', text);
  }

  /** BYE; resolves with the status of its answer. */
  async bye(): Promise<number> {
    return this.#request('BYE', '');
  }

  async #request(method: string, body: string): Promise<number> {
    this.#seq += 1;
    const seq = this.#seq;
    this.#answers = '';
    this.#send(method, this.#to, body, undefined, seq);
    const match = new RegExp(`SIP/2\\.0 (\\d{3})[\\s\\S]*?CSeq: ${seq} ${method}`);
    await until(`the ${method} is answered`, () => match.test(this.#answers), WAIT_MS);
    return Number(match.exec(this.#answers)![1]);
  }

  #send(method: string, to: string, body: string, number = 'x', seq = this.#seq): void {
    const [host, port] = this.#bridge.split(':') as [string, string];
    const local = `127.0.0.1:${this.#sip.address().port}`;
    const type = body === '' ? '' : `Content-Type: ${method === 'INVITE' ? 'application/sdp' : 'text/plain'}\r\n`;
    this.#sip.send(
      `${method} sip:${number}@${this.#bridge} SIP/2.0\r\nVia: SIP/2.0/UDP ${local};branch=z9hG4bK-${this.#callId}-${seq}-${method}\r\n` +
        `From: <sip:uac@${local}>;tag=uac-${this.#callId}\r\nTo: ${to}\r\nCall-ID: ${this.#callId}\r\nCSeq: ${seq} ${method}\r\n` +
        `Max-Forwards: 70\r\nContact: <sip:uac@${local}>\r\n${type}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      Number(port),
      host,
    );
  }
}
