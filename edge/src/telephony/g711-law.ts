import type { CanonicalAudioFormat } from '../audio/audio-format.ts';
import { encodeAlaw, encodeMulaw } from '../audio/g711.ts';

/** The two G.711 companding laws, by their RTP names: μ-law (PCMU, North America, Japan; Twilio) and A-law (PCMA). */
export type G711Law = 'pcmu' | 'pcma';

export const G711_RATE_HZ = 8000;
/** Telephony frames are 20 ms: 160 samples, one byte each. */
export const G711_FRAME_MS = 20;
export const G711_FRAME_BYTES = (G711_RATE_HZ * G711_FRAME_MS) / 1000;

/** The edge's name for the law, as its input converter takes it. */
export function audioFormatOf(law: G711Law): CanonicalAudioFormat {
  return law === 'pcmu' ? 'g711_ulaw' : 'g711_alaw';
}

/** The code of a zero sample: what a padded frame is filled with. */
export function silenceByte(law: G711Law): number {
  return law === 'pcmu' ? 0xff : 0xd5;
}

export function compand(law: G711Law, pcm8k: Int16Array): Uint8Array {
  return law === 'pcmu' ? encodeMulaw(pcm8k) : encodeAlaw(pcm8k);
}
