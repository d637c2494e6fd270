import { encodeWav } from '@venus/gpu-worker';

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
  return encodeWav(data, rateHz, 2);
}
