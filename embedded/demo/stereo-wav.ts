/** Writes a 16-bit stereo WAV: left = user, right = assistant, both already placed on one clock. */
export function stereoWav(
  left: { atMs: number; pcm: Int16Array }[],
  right: { atMs: number; pcm: Int16Array }[],
  rateHz = 24_000,
): Uint8Array {
  const endMs = Math.max(0, ...[...left, ...right].map((p) => p.atMs + (p.pcm.length / rateHz) * 1000)) + 250;
  const frames = Math.ceil((endMs / 1000) * rateHz);
  const data = new Int16Array(frames * 2);
  const place = (parts: { atMs: number; pcm: Int16Array }[], channel: 0 | 1) => {
    for (const p of parts) {
      const start = Math.round((p.atMs / 1000) * rateHz);
      for (let i = 0; i < p.pcm.length && start + i < frames; i++) data[(start + i) * 2 + channel] = p.pcm[i] ?? 0;
    }
  };
  place(left, 0);
  place(right, 1);
  const out = new Uint8Array(44 + data.byteLength);
  const view = new DataView(out.buffer);
  const ascii = (offset: number, s: string) => {
    for (let i = 0; i < s.length; i++) view.setUint8(offset + i, s.charCodeAt(i));
  };
  ascii(0, 'RIFF');
  view.setUint32(4, 36 + data.byteLength, true);
  ascii(8, 'WAVE');
  ascii(12, 'fmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true);
  view.setUint16(22, 2, true);
  view.setUint32(24, rateHz, true);
  view.setUint32(28, rateHz * 4, true);
  view.setUint16(32, 4, true);
  view.setUint16(34, 16, true);
  ascii(36, 'data');
  view.setUint32(40, data.byteLength, true);
  out.set(new Uint8Array(data.buffer), 44);
  return out;
}
