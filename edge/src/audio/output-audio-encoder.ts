import { AUDIO, base64ToPcm } from '@venus/protocol';
import { type CanonicalAudioFormat, NATIVE_RATE_HZ } from './audio-format.ts';
import { encodeBase64 } from './base64.ts';
import { encodeAlaw, encodeMulaw } from './g711.ts';
import { StreamingResampler } from './streaming-resampler.ts';

/**
 * Encodes the model's 24 kHz pcm16 output (base64, as timeline events carry it) into the client's
 * output format. pcm16 passes through untouched; G.711 is resampled to 8 kHz and companded.
 *
 * @example
 *   const encoder = new OutputAudioEncoder('g711_alaw');
 *   const delta = encoder.encode(event.data.pcm24k); // base64 A-law at 8 kHz
 */
export class OutputAudioEncoder {
  readonly format: CanonicalAudioFormat;
  readonly #resampler: StreamingResampler | undefined;

  constructor(format: CanonicalAudioFormat) {
    this.format = format;
    this.#resampler =
      format === 'pcm16' ? undefined : new StreamingResampler(AUDIO.outputSampleRateHz, NATIVE_RATE_HZ[format]);
  }

  encode(pcm24kBase64: string): string {
    if (this.#resampler === undefined) return pcm24kBase64;
    const pcm8k = this.#resampler.process(base64ToPcm(pcm24kBase64));
    return encodeBase64(this.format === 'g711_ulaw' ? encodeMulaw(pcm8k) : encodeAlaw(pcm8k));
  }

  /** A new utterance: drop the previous one's filter tail. */
  reset(): void {
    this.#resampler?.reset();
  }
}
