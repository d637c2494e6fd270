import { AUDIO, bytesToPcm } from '@venus/protocol';
import { type CanonicalAudioFormat, NATIVE_RATE_HZ } from './audio-format.ts';
import { decodeAlaw, decodeMulaw } from './g711.ts';
import { StreamingResampler } from './streaming-resampler.ts';

/**
 * Turns a client's input audio (24 kHz pcm16 or 8 kHz G.711) into the model's input, 16 kHz s16le.
 * One per connection and input format: the resampler carries state across appends.
 *
 * @example
 *   const converter = new InputAudioConverter('g711_ulaw');
 *   const pcm16k = converter.convert(mulawBytes); // 160 bytes of μ-law -> 320 samples
 */
export class InputAudioConverter {
  readonly format: CanonicalAudioFormat;
  readonly #resampler: StreamingResampler;

  constructor(format: CanonicalAudioFormat) {
    this.format = format;
    this.#resampler = new StreamingResampler(NATIVE_RATE_HZ[format], AUDIO.inputSampleRateHz);
  }

  /** Bytes as the client sent them (pcm16 must be whole samples) -> 16 kHz samples. */
  convert(bytes: Uint8Array): Int16Array<ArrayBuffer> {
    switch (this.format) {
      case 'pcm16':
        return this.#resampler.process(bytesToPcm(bytes));
      case 'g711_ulaw':
        return this.#resampler.process(decodeMulaw(bytes));
      case 'g711_alaw':
        return this.#resampler.process(decodeAlaw(bytes));
    }
  }

  /** Samples at this converter's rate (24 kHz for pcm16), already decoded -> 16 kHz samples. */
  convertPcm(pcm: Int16Array): Int16Array<ArrayBuffer> {
    return this.#resampler.process(pcm);
  }
}
