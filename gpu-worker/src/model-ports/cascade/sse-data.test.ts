import { describe, expect, it } from 'vitest';
import { sseData } from './sse-data.ts';

function streamOf(pieces: (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const piece of pieces) controller.enqueue(typeof piece === 'string' ? encoder.encode(piece) : piece);
      controller.close();
    },
  });
}

async function collect(stream: ReadableStream<Uint8Array>): Promise<string[]> {
  const out: string[] = [];
  for await (const data of sseData(stream)) out.push(data);
  return out;
}

describe('sseData', () => {
  it('yields one payload per event, whatever the line endings and splits', async () => {
    const events = await collect(
      streamOf(['data: {"a":1}\r', '\n\r\ndata: {"b"', ':2}\n\n: a comment\nevent: x\ndata: [DONE]\r\r']),
    );
    expect(events).toEqual(['{"a":1}', '{"b":2}', '[DONE]']);
  });

  it('joins multi-line data and keeps a last event without its blank line', async () => {
    expect(await collect(streamOf(['data:one\ndata: two\n\ndata: tail']))).toEqual(['one\ntwo', 'tail']);
  });

  it('decodes a character split across reads', async () => {
    const bytes = new TextEncoder().encode('data: 18 °C\n\n');
    const cut = bytes.indexOf(0xc2) + 1;
    expect(await collect(streamOf([bytes.subarray(0, cut), bytes.subarray(cut)]))).toEqual(['18 °C']);
  });
});
