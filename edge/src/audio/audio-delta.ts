import type { OutputAudioEncoder } from './output-audio-encoder.ts';

/**
 * One chunk of assistant audio as an audio delta event carries it: the 24 kHz samples, and their
 * base64 in the client's output format, encoded on first use and once. A WebSocket client's event
 * is written with the base64 (event-json.ts puts it in the text as it is: the alphabet needs no
 * escaping); a transport with its own media (WebRTC's RTP track) takes the samples and never pays
 * for base64 at all. `JSON.stringify` of an event holding one writes the base64 too (toJSON).
 *
 * The encoder carries filter state from chunk to chunk (G.711's resampler), so a chunk must be
 * encoded, if at all, before the next one is made: the connection serialises each event as it
 * emits it, in order.
 *
 * @example
 *   const delta = new AudioDelta(pcm24k, encoder);
 *   socket.send(`..."delta":"${delta.base64}"}`);
 */
export class AudioDelta {
  readonly pcm24k: Int16Array;
  readonly #encoder: OutputAudioEncoder;
  #base64: string | undefined;

  constructor(pcm24k: Int16Array, encoder: OutputAudioEncoder) {
    this.pcm24k = pcm24k;
    this.#encoder = encoder;
  }

  /** Base64 of the samples in the encoder's format (standard alphabet). */
  get base64(): string {
    this.#base64 ??= this.#encoder.encode(this.pcm24k);
    return this.#base64;
  }

  toJSON(): string {
    return this.base64;
  }
}
