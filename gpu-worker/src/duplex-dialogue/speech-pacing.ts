import { type OutputStep, type SpokenSegment, type StepRequest, withTimeout } from '@venus/protocol';

/** One thing the assistant says, as the core paces it out: text deltas, then speech one chunk per step. */
export interface SpokenUtterance {
  readonly id: string;
  started: boolean;
  finished: 'completed' | 'interrupted' | null;
  chunkSeq: number;
  nextTextDelta(): string;
  /** Raw text not emitted yet, once all speech was emitted. */
  restText(): string;
  /** Up to `maxSamples` of 24 kHz speech, or null when none is ready. */
  takeAudio(maxSamples: number): Int16Array | null;
  /** All text and speech has been emitted. */
  readonly done: boolean;
  readonly emittedMs: number;
  /** The visible text of the whole utterance (what a completed utterance leaves in the context). */
  readonly fullText: string;
  /** Segments whose speech is known, in speaking order (the input of protocol's `heardText`). */
  readonly segments: readonly SpokenSegment[];
}

/** The longest a chunk step waits for the speech of the utterance it starts (see `complete`). */
export const SPEECH_WAIT_MAX_MS = 250;

export interface SpeechPacingHooks<U extends SpokenUtterance> {
  /** `u` starts on `out`: it is the dialogue's current utterance from now on. */
  starting(u: U, out: OutputStep): void;
  /** All of `u` was emitted. */
  completed(u: U): void;
  /** The synthesis of `u` while its speech is not ready yet; null when it is ready (or failed). */
  pendingSpeech(u: U): Promise<unknown> | null;
  /** The utterance being spoken (started, not finished). */
  current(): U | null;
}

/**
 * How a dialogue's utterances are paced out over its steps: each chunk step emits the time since
 * the previous one (at most 10 s) of speech, with the text delta, the spoken segments the chunk
 * newly makes known and, on the last chunk, the end of the utterance. A step that starts an
 * utterance whose speech is still being synthesised may wait briefly for it (`complete`).
 *
 * @example
 *   pacing.step(request, plan.audioMs);
 *   pacing.speak(u, out);
 *   return pacing.complete(out);
 */
export class SpeechPacing<U extends SpokenUtterance> {
  readonly #hooks: SpeechPacingHooks<U>;
  readonly #reported = new WeakMap<U, number>();
  #lastAtMs: number | null = null;
  #chunkMs = 0;
  /** The utterance the last chunk step started without speech, for `complete`. */
  #awaiting: { u: U; out: OutputStep; chunkSamples: number; waitMs: number } | null = null;

  constructor(hooks: SpeechPacingHooks<U>) {
    this.#hooks = hooks;
  }

  /** A step begins: `audioMs` of user audio came in it (the first step's chunk length). */
  step(request: StepRequest, audioMs: number): void {
    this.#chunkMs =
      this.#lastAtMs === null
        ? audioMs > 0
          ? audioMs
          : 1000
        : Math.min(10_000, Math.max(0, request.atMs - this.#lastAtMs));
    // A perception tick paces out nothing: the next chunk step emits the whole chunk since the last one.
    if (!request.listenOnly) this.#lastAtMs = request.atMs;
    this.#awaiting = null;
  }

  /** `out` speaks `u`: its next text delta and the step's chunk of its speech. */
  speak(u: U, out: OutputStep): void {
    const chunkSamples = Math.round(this.#chunkMs * 24);
    // How long `complete` may wait for the speech of an utterance this step starts.
    const waitMs = Math.min(SPEECH_WAIT_MAX_MS, this.#chunkMs / 4);
    out.decision = 'speak';
    out.utteranceId = u.id;
    const starts = !u.started;
    if (starts) {
      u.started = true;
      this.#hooks.starting(u, out);
    }
    out.text = u.nextTextDelta();
    this.#emitSpeech(u, out, chunkSamples);
    if (starts && out.audio === null && u.finished === null && waitMs > 0) {
      this.#awaiting = { u, out, chunkSamples, waitMs };
    }
  }

  /**
   * After a chunk step that started an utterance whose speech was not synthesised yet: waits for
   * it, at most a quarter of the chunk and SPEECH_WAIT_MAX_MS, and adds its first chunk of speech
   * to the same output. Without it the step carries text only and the speech is heard one whole
   * chunk later (a second at 1000 ms chunks); a short synthesis now costs the step tens of
   * milliseconds instead. Any other step is returned as it is, at once.
   */
  async complete(out: OutputStep): Promise<OutputStep> {
    const awaiting = this.#awaiting;
    this.#awaiting = null;
    if (awaiting === null || awaiting.out !== out) return out;
    const pending = this.#hooks.pendingSpeech(awaiting.u);
    if (pending === null) return out;
    await withTimeout(pending, awaiting.waitMs);
    // Stopped or cancelled meanwhile: the step stays as it was.
    if (this.#hooks.current() !== awaiting.u || awaiting.u.finished !== null) return out;
    this.#emitSpeech(awaiting.u, out, awaiting.chunkSamples);
    return out;
  }

  /** The step's chunk of `u`'s speech (when ready), the segments it newly knows, and its end. */
  #emitSpeech(u: U, out: OutputStep, chunkSamples: number): void {
    const audio = u.takeAudio(chunkSamples);
    out.audioChunkSeq = u.chunkSeq;
    if (audio) {
      out.audio = audio;
      u.chunkSeq += 1;
    }
    const reported = this.#reported.get(u) ?? 0;
    if (u.segments.length > reported) {
      out.spokenSegments = u.segments.slice(reported);
      this.#reported.set(u, u.segments.length);
    }
    if (u.done) {
      out.text += u.restText();
      out.turnFinished = true;
      out.finishReason = 'completed';
      this.#hooks.completed(u);
    }
  }
}
