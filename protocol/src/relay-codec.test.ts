import { describe, expect, it } from 'vitest';
import { decodeEdgeToWorkerFrame, decodeWorkerToEdgeFrame, encodeRelayFrame } from './relay-codec.ts';

describe('relay codec: assistant_audio', () => {
  it('carries the samples as msgpack binary, byte for byte', () => {
    const pcm = new Int16Array([0, 1, -1, 32767, -32768, 1234]);
    const pcm24k = new Uint8Array(pcm.buffer);
    const bytes = encodeRelayFrame({
      kind: 'assistant_audio',
      session: 's1',
      utteranceId: 'u1',
      audioChunkSeq: 3,
      pcm24k,
    });
    // bin 8 header (0xc4, length) followed by the raw bytes: no base64 on the wire.
    const at = Buffer.from(bytes).indexOf(Buffer.from([0xc4, pcm24k.byteLength]));
    expect(at).toBeGreaterThan(0);
    expect([...bytes.subarray(at + 2, at + 2 + pcm24k.byteLength)]).toEqual([...pcm24k]);

    const decoded = decodeWorkerToEdgeFrame(bytes);
    expect(decoded.ok).toBe(true);
    if (!decoded.ok || decoded.frame.kind !== 'assistant_audio') throw new Error('not an assistant_audio frame');
    expect(decoded.frame).toMatchObject({ session: 's1', utteranceId: 'u1', audioChunkSeq: 3 });
    expect([...decoded.frame.pcm24k]).toEqual([...pcm24k]);
  });

  it('refuses samples sent as a string, naming the field', () => {
    const bytes = encodeRelayFrame({
      kind: 'assistant_audio',
      session: 's1',
      utteranceId: 'u1',
      audioChunkSeq: 0,
      pcm24k: 'AAAA' as unknown as Uint8Array<ArrayBuffer>,
    });
    const decoded = decodeWorkerToEdgeFrame(bytes);
    expect(decoded).toMatchObject({ ok: false, session: 's1' });
    if (!decoded.ok) expect(decoded.error.message).toContain('pcm24k');
  });
});

describe('relay codec: microphone audio', () => {
  it('gives decoded audio bytes of their own, even from a message inside a larger buffer', () => {
    const samples = Int16Array.from({ length: 320 }, (_, i) => (i * 97) % 30_000);
    const bytes = encodeRelayFrame({ kind: 'audio', session: 's', pcm16k: new Uint8Array(samples.buffer) });
    // A socket hands messages out as views into a larger (pooled) buffer, at any offset.
    const pool = Buffer.alloc(bytes.length + 4097);
    pool.set(bytes, 3);
    const decoded = decodeEdgeToWorkerFrame(pool.subarray(3, 3 + bytes.length));
    if (!decoded.ok || decoded.frame.kind !== 'audio') throw new Error('not decoded');
    // What the worker does with it: the samples of exactly this frame.
    expect(Array.from(new Int16Array(decoded.frame.pcm16k.slice().buffer))).toEqual(Array.from(samples));
  });
});
