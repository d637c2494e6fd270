/** s16le PCM <-> base64 and byte views; the only audio codec the contracts speak. */
export function pcmToBase64(pcm: Int16Array): string {
  return Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength).toString('base64');
}

export function base64ToPcm(b64: string): Int16Array {
  return bytesToPcm(Buffer.from(b64, 'base64'));
}

/** Copies when the bytes are odd-aligned so the Int16Array view is always valid. */
export function bytesToPcm(bytes: Uint8Array): Int16Array {
  const even = bytes.byteLength - (bytes.byteLength % 2);
  if (bytes.byteOffset % 2 === 0) return new Int16Array(bytes.buffer, bytes.byteOffset, even / 2);
  const copy = new Uint8Array(even);
  copy.set(bytes.subarray(0, even));
  return new Int16Array(copy.buffer);
}

export function pcmDurationMs(samples: number, sampleRateHz: number): number {
  return (samples * 1000) / sampleRateHz;
}

/** The pieces of a PCM stream joined into one array (always a new one). */
export function concatPcm(parts: readonly Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
