import type { EdgeToWorkerFrame } from '@venus/protocol';
import { audioDurationMs, type CanonicalAudioFormat } from '../audio/audio-format.ts';
import { InputAudioConverter } from '../audio/input-audio-converter.ts';
import type { SessionHooks } from '../tenancy/session-hooks.ts';
import { plainAppendAudio } from './client-event-parser.ts';
import { appendedAudioBytes } from './client-input.ts';
import type { ProtocolError } from './protocol-error.ts';

export interface InputAudioDeps {
  session: string;
  /** The tenant's accounting: every piece of audio is admitted (or refused) before any work on it. */
  hooks: SessionHooks | undefined;
  send(frame: Extract<EdgeToWorkerFrame, { kind: 'audio' }>): void;
}

/**
 * A session's microphone input, whichever way it arrives: base64 in `input_audio_buffer.append`
 * (WebSocket clients, in the declared input format), or typed 24 kHz samples from a transport that
 * decodes its own media (WebRTC's Opus track). Both take one path: sized, admitted against the
 * tenant's audio budget before it is resampled or relayed (audio over the budget costs no more
 * work), converted to the model's 16 kHz, and sent as one `audio` relay frame.
 *
 * @example
 *   const input = new InputAudio({ session, hooks, send: (frame) => link.send(frame) });
 *   const error = input.appendBase64(event.audio); // input_audio_buffer.append, parsed
 *   input.appendPcm24k(decodedOpusFrame);            // a WebRTC microphone frame
 */
export class InputAudio {
  readonly #deps: InputAudioDeps;
  #format: CanonicalAudioFormat = 'pcm16';
  /** Converts the declared format; carries resampler state across appends. */
  #converter = new InputAudioConverter('pcm16');
  /** Typed 24 kHz input while the declared format is G.711 (made on first use). */
  #typed: InputAudioConverter | undefined;

  constructor(deps: InputAudioDeps) {
    this.#deps = deps;
  }

  /** The client declared another input format: a fresh converter (its filter state would not carry over). */
  setFormat(format: CanonicalAudioFormat): void {
    if (format === this.#format) return;
    this.#format = format;
    this.#converter = new InputAudioConverter(format);
  }

  /** One validated `input_audio_buffer.append`'s audio. */
  appendBase64(audio: string): ProtocolError | undefined {
    const bytes = appendedAudioBytes(audio, this.#format);
    return bytes.ok ? this.#appendBytes(bytes.value) : bytes.error;
  }

  /**
   * The fast path for a client message: an append in its plain form whose audio checks out is
   * taken here, without JSON.parse or the schema (see plainAppendAudio); true when it was, its
   * admission's refusal (if any) given to `onError`. False: not such a message, or its audio is
   * bad; it must go through parseClientEvent, so every refusal keeps its usual code and message.
   */
  plainAppend(text: string, onError: (error: ProtocolError) => void): boolean {
    const audio = plainAppendAudio(text);
    if (audio === undefined) return false;
    const bytes = appendedAudioBytes(audio, this.#format);
    if (!bytes.ok) return false;
    const error = this.#appendBytes(bytes.value);
    if (error !== undefined) onError(error);
    return true;
  }

  #appendBytes(bytes: Uint8Array): ProtocolError | undefined {
    const converter = this.#converter;
    return this.#admit(audioDurationMs(bytes.length, this.#format), () => converter.convert(bytes));
  }

  /** 24 kHz mono samples (a decoded WebRTC frame): no JSON, no base64 on the way. */
  appendPcm24k(pcm24k: Int16Array): ProtocolError | undefined {
    let converter = this.#converter;
    if (this.#format !== 'pcm16') {
      this.#typed ??= new InputAudioConverter('pcm16');
      converter = this.#typed;
    }
    return this.#admit(audioDurationMs(pcm24k.byteLength, 'pcm16'), () => converter.convertPcm(pcm24k));
  }

  #admit(ms: number, convert: () => Int16Array<ArrayBuffer>): ProtocolError | undefined {
    const admitted = ms === 0 ? undefined : this.#deps.hooks?.admitAudioIn(ms);
    // Refused with no error: the refusal is already reported, this piece is dropped quietly.
    if (admitted !== undefined && !admitted.ok) return admitted.error;
    const pcm = convert();
    if (pcm.length > 0) {
      const pcm16k = new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength);
      this.#deps.send({ kind: 'audio', session: this.#deps.session, pcm16k });
    }
    return undefined;
  }
}
