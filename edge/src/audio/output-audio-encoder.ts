import { AUDIO } from '@venus/protocol';
import { type CanonicalAudioFormat, NATIVE_RATE_HZ } from './audio-format.ts';
import { encodeBase64 } from './base64.ts';
import { encodeAlaw, encodeMulaw } from './g711.ts';
import { StreamingResampler } from './streaming-resampler.ts';

/**
 * Encodes the model's 24 kHz pcm16 output (the samples of an `assistant_audio` relay frame) into
 * the client's output format, as the base64 an audio delta carries. pcm16 is only base64-encoded;
 * G.711 is resampled to 8 kHz and companded first.
 *
 * @example
 *   const encoder = new OutputAudioEncoder('g711_alaw');
 *   const delta = encoder.encode(bytesToPcm(frame.pcm24k)); // base64 A-law at 8 kHz
 */
export class OutputAudioEncoder {
  readonly format: CanonicalAudioFormat;
  readonly #resampler: StreamingResampler | undefined;

  constructor(format: CanonicalAudioFormat) {
    this.format = format;
    this.#resampler =
      format === 'pcm16' ? undefined : new StreamingResampler(AUDIO.outputSampleRateHz, NATIVE_RATE_HZ[format]);
  }

  encode(pcm24k: Int16Array): string {
    if (this.#resampler === undefined) {
      return encodeBase64(new Uint8Array(pcm24k.buffer, pcm24k.byteOffset, pcm24k.byteLength));
    }
    const pcm8k = this.#resampler.process(pcm24k);
    return encodeBase64(this.format === 'g711_ulaw' ? encodeMulaw(pcm8k) : encodeAlaw(pcm8k));
  }

  /** A new utterance: drop the previous one's filter tail. */
  reset(): void {
    this.#resampler?.reset();
  }
}
