/**
 * G.711 companding (ITU-T G.711, the classic Sun reference algorithm): 8-bit μ-law and A-law
 * codes <-> 16-bit linear PCM. Telephony clients (`g711_ulaw`/`audio/pcmu`, `g711_alaw`/`audio/pcma`)
 * send and expect these at 8 kHz.
 *
 * @example
 *   const bytes = encodeMulaw(new Int16Array([0, 1000, -1000]));
 *   const pcm = decodeMulaw(bytes); // ≈ [0, 1000, -1000] within the quantisation step
 */
const ULAW_BIAS = 0x84;
const ULAW_CLIP = 32635;
const ALAW_SEGMENT_ENDS = [0x1f, 0x3f, 0x7f, 0xff, 0x1ff, 0x3ff, 0x7ff, 0xfff] as const;

export function linearToMulaw(sample: number): number {
  let s = sample;
  const sign = s < 0 ? 0x80 : 0;
  if (sign) s = -s;
  if (s > ULAW_CLIP) s = ULAW_CLIP;
  s += ULAW_BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (s & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (s >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

export function mulawToLinear(code: number): number {
  const u = ~code & 0xff;
  const exponent = (u >> 4) & 0x07;
  const magnitude = ((((u & 0x0f) << 3) + ULAW_BIAS) << exponent) - ULAW_BIAS;
  return u & 0x80 ? -magnitude : magnitude;
}

export function linearToAlaw(sample: number): number {
  let pcm = sample >> 3;
  let mask: number;
  if (pcm >= 0) {
    mask = 0xd5;
  } else {
    mask = 0x55;
    pcm = -pcm - 1;
  }
  let segment = 0;
  while (segment < 8 && pcm > ALAW_SEGMENT_ENDS[segment]!) segment++;
  if (segment >= 8) return 0x7f ^ mask;
  const mantissa = segment < 2 ? (pcm >> 1) & 0x0f : (pcm >> segment) & 0x0f;
  return ((segment << 4) | mantissa) ^ mask;
}

export function alawToLinear(code: number): number {
  const a = code ^ 0x55;
  let magnitude = (a & 0x0f) << 4;
  const segment = (a & 0x70) >> 4;
  if (segment === 0) magnitude += 8;
  else if (segment === 1) magnitude += 0x108;
  else magnitude = (magnitude + 0x108) << (segment - 1);
  return a & 0x80 ? magnitude : -magnitude;
}

const MULAW_TABLE = Int16Array.from({ length: 256 }, (_, i) => mulawToLinear(i));
const ALAW_TABLE = Int16Array.from({ length: 256 }, (_, i) => alawToLinear(i));

export function decodeMulaw(bytes: Uint8Array): Int16Array {
  const out = new Int16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = MULAW_TABLE[bytes[i]!]!;
  return out;
}

export function decodeAlaw(bytes: Uint8Array): Int16Array {
  const out = new Int16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = ALAW_TABLE[bytes[i]!]!;
  return out;
}

export function encodeMulaw(pcm: Int16Array): Uint8Array {
  const out = new Uint8Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = linearToMulaw(pcm[i]!);
  return out;
}

export function encodeAlaw(pcm: Int16Array): Uint8Array {
  const out = new Uint8Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = linearToAlaw(pcm[i]!);
  return out;
}
