import OpusScript from 'opusscript';

/** Opus on RTP always counts time at 48 kHz (RFC 7587), whatever rate the codec runs at. */
export const OPUS_RTP_CLOCK_HZ = 48_000;
/** The frame size the edge sends and expects: 20 ms, WebRTC's default ptime. */
export const OPUS_FRAME_MS = 20;
/** OpenAI's pcm16 rate, at which the realtime core takes and gives audio. */
export const PCM_RATE_HZ = 24_000;

type OpusRate = 8000 | 12000 | 16000 | 24000 | 48000;

/**
 * Opus encoding and decoding at the realtime core's own rate. Opus resamples internally: a decoder
 * may output any of 8–48 kHz whatever rate the sender encoded at, and an encoder takes any of them
 * as input, so the edge runs both at 24 kHz mono and needs no resampler of its own (the SDP still
 * says `opus/48000/2`: that names the RTP clock and the codec's stereo capability, not the PCM).
 *
 * Cost of the wasm build (`opusscript`), 20 ms frames at 24 kHz on a 2-core machine: encoding
 * ~0.3–0.4 ms (over 1 ms when the machine is loaded), decoding ~0.1–0.2 ms. Both run inline on the
 * socket loop: per session that is about 2–3% of a core, a few tenths of a millisecond at a time,
 * which costs less than a worker-thread hop per frame would. An edge carrying many concurrent calls
 * should move the codec to a worker thread. The first codec compiles the wasm module (~0.3 s,
 * blocking): `OpusCodec.preload()` does that at startup instead of in the middle of a first call.
 *
 * opusscript copies PCM bytes, not samples, so both directions pass Buffers of little-endian s16.
 *
 * @example
 *   const codec = new OpusCodec();
 *   const packet = codec.encode(new Int16Array(480)); // 20 ms at 24 kHz
 *   const pcm = codec.decode(packet);
 *   codec.close();
 */
export class OpusCodec {
  readonly rateHz: number;
  readonly frameSamples: number;
  #encoder: OpusScript | undefined;
  #decoder: OpusScript | undefined;
  #closed = false;

  constructor(rateHz: OpusRate = PCM_RATE_HZ) {
    this.rateHz = rateHz;
    this.frameSamples = (rateHz * OPUS_FRAME_MS) / 1000;
  }

  /** Compiles the wasm codec now rather than during the first call. */
  static preload(): void {
    new OpusScript(PCM_RATE_HZ, 1, OpusScript.Application.VOIP).delete();
  }

  /** One 20 ms frame of mono PCM at `rateHz` -> one Opus packet. */
  encode(frame: Int16Array): Uint8Array {
    if (frame.length !== this.frameSamples) {
      throw new RangeError(`an Opus frame is ${this.frameSamples} samples, got ${frame.length}`);
    }
    const encoder = this.#encoderInstance();
    return encoder.encode(Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength), this.frameSamples);
  }

  /** One Opus packet (any frame size, mono or stereo) -> mono PCM at `rateHz`. */
  decode(packet: Uint8Array): Int16Array {
    const bytes = this.#decoderInstance().decode(Buffer.from(packet.buffer, packet.byteOffset, packet.byteLength));
    // Copy: the Buffer may sit at an odd offset in Node's pool, and Int16Array needs an even one.
    const pcm = new Int16Array(bytes.length >> 1);
    new Uint8Array(pcm.buffer).set(bytes.subarray(0, pcm.byteLength));
    return pcm;
  }

  /** Frees the wasm memory; the codec is unusable afterwards. */
  close(): void {
    this.#closed = true;
    this.#encoder?.delete();
    this.#decoder?.delete();
    this.#encoder = undefined;
    this.#decoder = undefined;
  }

  #encoderInstance(): OpusScript {
    this.#checkOpen();
    if (this.#encoder === undefined) {
      this.#encoder = new OpusScript(this.rateHz as OpusRate, 1, OpusScript.Application.VOIP);
      this.#encoder.setBitrate(32_000);
    }
    return this.#encoder;
  }

  #decoderInstance(): OpusScript {
    this.#checkOpen();
    this.#decoder ??= new OpusScript(this.rateHz as OpusRate, 1, OpusScript.Application.VOIP);
    return this.#decoder;
  }

  #checkOpen(): void {
    if (this.#closed) throw new Error('OpusCodec is closed');
  }
}
