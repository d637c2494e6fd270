import { AUDIO, type EdgeToWorkerFrame } from '@venus/protocol';
import { randomId } from './ids.ts';
import type { Emit } from './outbound-event.ts';
import { errorEvent, type ProtocolError } from './protocol-error.ts';
import type { InputUsage } from './response-usage.ts';
import type { UserAudioTurns } from './user-audio-turns.ts';

type AudioFrame = Extract<EdgeToWorkerFrame, { kind: 'audio' }>;

export interface InputAudioBufferDeps {
  session: string;
  emit: Emit;
  /** Relays a frame to the worker. */
  send(frame: AudioFrame): void;
  /** `turn_detection: null`: audio waits here for `input_audio_buffer.commit`. */
  pushToTalk(): boolean;
  /** Where a committed turn's user item is made (`input_audio_buffer.committed`, the item, its transcript). */
  turns: UserAudioTurns;
  usage: InputUsage;
}

/** 16 kHz s16: bytes per millisecond. */
const BYTES_PER_MS = (AUDIO.inputSampleRateHz / 1000) * 2;
/**
 * Push to talk holds at most this much audio (960 kB at 16 kHz s16): a long turn is committed in
 * parts, a client that never commits cannot grow the edge's memory. Audio past it is refused with
 * `audio_too_large`, not dropped silently.
 */
export const MAX_HELD_MS = 30_000;
/**
 * Silence relayed after a committed turn: the worker's voice activity detection ends a turn after
 * 500 ms of silence, so this is what turns the held audio into exactly one user turn for the model.
 */
export const COMMIT_SILENCE_MS = 700;
/** Silence goes in frames of this length, like a client's appends. */
const SILENCE_FRAME_MS = 100;

/**
 * The input audio buffer of OpenAI's protocol. With the runtime's own turn taking (server_vad,
 * semantic_vad) audio goes straight to the worker and `commit`/`clear` are acknowledged. With
 * `turn_detection: null` (push to talk) the admitted, resampled audio is held here: `clear` drops
 * it, `commit` makes it one user turn: `input_audio_buffer.committed` naming the item and the one
 * before it, a user item with an `input_audio` part (its transcript comes when the model port has
 * one), then the held audio and COMMIT_SILENCE_MS of silence relayed, so the worker's endpointing
 * ends the turn there. Switching back to the runtime's turn taking relays whatever is held.
 *
 * @example
 *   const buffer = new InputAudioBuffer({ session, emit, send, pushToTalk: () => true, turns, usage });
 *   buffer.relay(frame);     // held
 *   buffer.commit();         // committed + user item, audio and silence relayed
 */
export class InputAudioBuffer {
  readonly #deps: InputAudioBufferDeps;
  #held: AudioFrame[] = [];
  #heldBytes = 0;

  constructor(deps: InputAudioBufferDeps) {
    this.#deps = deps;
  }

  /** One admitted, resampled piece of microphone audio. */
  relay(frame: AudioFrame): void {
    if (!this.#deps.pushToTalk()) {
      if (this.#held.length > 0) this.#flush();
      this.#forward(frame);
      return;
    }
    if (this.#heldBytes + frame.pcm16k.byteLength > MAX_HELD_MS * BYTES_PER_MS) {
      const message = `push to talk holds at most ${MAX_HELD_MS / 1000} s of audio: commit or clear the buffer`;
      this.#deps.emit(errorEvent({ code: 'audio_too_large', message, param: 'input_audio_buffer' }, null));
      return;
    }
    // A copy: the frame's bytes may be a view on a buffer its sender reuses.
    this.#held.push({ ...frame, pcm16k: frame.pcm16k.slice() });
    this.#heldBytes += frame.pcm16k.byteLength;
  }

  commit(): ProtocolError | undefined {
    const { emit, turns } = this.#deps;
    if (!this.#deps.pushToTalk()) {
      // The runtime commits each turn itself when its speech ends; this only acknowledges.
      emit({ type: 'input_audio_buffer.committed', previous_item_id: null, item_id: randomId('item') });
      return undefined;
    }
    if (this.#heldBytes === 0) {
      return { code: 'invalid_event', message: 'input_audio_buffer: nothing to commit', param: 'input_audio_buffer' };
    }
    turns.committed(randomId('item'));
    this.#flush();
    const silence = new Uint8Array(SILENCE_FRAME_MS * BYTES_PER_MS);
    for (let ms = 0; ms < COMMIT_SILENCE_MS; ms += SILENCE_FRAME_MS) {
      this.#deps.send({ kind: 'audio', session: this.#deps.session, pcm16k: silence });
    }
    return undefined;
  }

  clear(): void {
    this.#held = [];
    this.#heldBytes = 0;
    this.#deps.emit({ type: 'input_audio_buffer.cleared' });
  }

  /** Milliseconds of audio held for a commit. */
  get heldMs(): number {
    return this.#heldBytes / BYTES_PER_MS;
  }

  #flush(): void {
    const held = this.#held;
    this.#held = [];
    this.#heldBytes = 0;
    for (const frame of held) this.#forward(frame);
  }

  #forward(frame: AudioFrame): void {
    this.#deps.usage.audio(frame.pcm16k.byteLength / BYTES_PER_MS);
    this.#deps.send(frame);
  }
}
