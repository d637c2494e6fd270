import { SIP_LIMITS } from './message.ts';

/**
 * Cuts a SIP byte stream (TCP) into messages (RFC 3261 §18.3): headers up to the blank line, then
 * exactly Content-Length bytes of body. Keepalive CRLFs between messages are skipped. Bounded: a
 * header block past 64 KiB, or a missing or oversized Content-Length, is an error after which the
 * connection must close (the stream can no longer be framed); so are Content-Lengths that disagree.
 */
export class StreamFramer {
  #buffer: Buffer = Buffer.alloc(0);

  /**
   * The whole messages `chunk` completes, or an error naming what was wrong, with the status to
   * answer with and, when the header block was read whole, that block (so the request can be answered).
   */
  push(chunk: Buffer): { messages: Buffer[]; error?: string; status?: number; head?: Buffer } {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    const messages: Buffer[] = [];
    for (;;) {
      let start = 0;
      while (start < this.#buffer.length && (this.#buffer[start] === 0x0d || this.#buffer[start] === 0x0a)) start++;
      if (start > 0) this.#buffer = this.#buffer.subarray(start);
      const end = this.#buffer.indexOf('\r\n\r\n');
      if (end < 0) {
        if (this.#buffer.length > SIP_LIMITS.maxMessageBytes)
          return { messages, error: 'header block too large', status: 413 };
        return { messages };
      }
      const head = this.#buffer.subarray(0, end).toString('latin1');
      const lengths = new Set(
        [...`\r\n${head}`.matchAll(/\r\n(?:content-length|l)[ \t]*:[ \t]*(\d{1,9})[ \t]*(?=\r\n|$)/gi)].map((m) =>
          Number(m[1]),
        ),
      );
      const whole = Buffer.from(this.#buffer.subarray(0, end + 4));
      if (lengths.size === 0)
        return { messages, error: 'Content-Length is required on a stream transport', status: 400, head: whole };
      if (lengths.size > 1) return { messages, error: 'conflicting Content-Length headers', status: 400, head: whole };
      const length = [...lengths][0]!;
      if (length > SIP_LIMITS.maxBodyBytes)
        return { messages, error: 'Content-Length too large', status: 413, head: whole };
      const total = end + 4 + length;
      if (this.#buffer.length < total) return { messages };
      messages.push(Buffer.from(this.#buffer.subarray(0, total)));
      this.#buffer = this.#buffer.subarray(total);
    }
  }
}
