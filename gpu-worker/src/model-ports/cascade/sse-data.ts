/**
 * The `data` payloads of a server-sent event stream, one per event, in order (multi-line data
 * joined with newlines, comments and other fields skipped). Lines may end in LF, CRLF or CR, and
 * bytes may be split anywhere, including inside a multi-byte character or between CR and LF.
 *
 * @example
 *   for await (const data of sseData(response.body)) if (data === '[DONE]') break;
 */
export async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  const reader = body.getReader();
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      for (;;) {
        const end = buffer.search(/\r\n|\r|\n/);
        // A CR at the very end may be the first half of a CRLF still on the wire.
        if (end < 0 || (!done && end === buffer.length - 1 && buffer[end] === '\r')) break;
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + (buffer.startsWith('\r\n', end) ? 2 : 1));
        if (line === '') {
          if (data.length > 0) yield data.join('\n');
          data = [];
        } else if (line.startsWith('data:')) {
          data.push(line.slice(line[5] === ' ' ? 6 : 5));
        }
      }
      if (done) break;
    }
    // A stream that ends without the final blank line still delivers its last event.
    if (buffer.startsWith('data:')) data.push(buffer.slice(buffer[5] === ' ' ? 6 : 5));
    finished = true;
    if (data.length > 0) yield data.join('\n');
  } finally {
    // A consumer that stops early (the [DONE] event, an abort) lets go of the connection too.
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
