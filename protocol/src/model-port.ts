import type { SpokenSegment } from './heard-text.ts';
import type { ContextRole, InterruptionAction, OverlapCause, UserTranscript } from './timeline.ts';

/**
 * The model port: how a session host drives a model, following the official Realtime-Venus
 * serving port (open with an incarnation, ordered input fences, private prefill into the same
 * context, playback acknowledgements, one output step per chunk, close).
 *
 * Inputs are acknowledged in order; a step sees exactly the inputs whose `inputSeq` is at most its
 * `inputSeqCutoff`. A call carrying an older incarnation than the session's rejects with
 * `stale_incarnation`.
 *
 * @example
 *   const s = await port.openSession({ sessionId: 's1', incarnation: 0 });
 *   await s.appendText({ inputSeq: 1, itemId: 'i1', text: "what's the weather in Paris" });
 *   const step = await s.step({ chunk: 0, inputSeqCutoff: 1, atMs: 0 });
 */
export interface ModelCapabilities {
  model: string;
  modelRevision: string;
  /** Special-token names as the model spells them, e.g. listen -> "<|listen|>". */
  specialTokens: Record<string, string>;
  /** Concurrent sessions this port can step within a chunk period; what the fleet sees. */
  maxSessions: number;
  audioInput: boolean;
  videoInput: boolean;
  textInput: boolean;
  nativeAudioOutput: boolean;
  inputSampleRateHz: 16_000;
  outputSampleRateHz: 24_000;
}

export interface OpenSessionRequest {
  sessionId: string;
  incarnation: number;
  voice?: string;
  instructions?: string;
  /** Phrases users of this session may say beyond the model's own domain (deployed functions' examples and keywords). */
  phrases?: readonly string[];
  /**
   * The conversation so far when a session resumes under a new incarnation (failover, drain):
   * what the user said and what they heard of each reply, rebuilt from the timeline. Absent for a
   * new session. A model seeds its context with it instead of starting empty.
   */
  history?: readonly ContextEntry[];
  /** A plan parked before the resume, so the model can still offer and resume it. */
  parked?: { planId: string; utteranceId: string; remainder: string };
}

/**
 * One entry of a session's context: user words, heard assistant speech, the client's system
 * instructions, or a `<backend>` result.
 */
export interface ContextEntry {
  role: ContextRole;
  text: string;
}

export interface InputAck {
  inputSeq: number;
}

export interface PrefillRequest {
  /** Private text as it enters the context, e.g. `<backend>It is 18 degrees in Paris.</backend>`. */
  text: string;
  workId?: string;
  attemptId: string;
  /** `speak`: the model should say it at its next opportunity; `silent`: context only. */
  mode: 'speak' | 'silent';
}

export interface PrefillAck {
  attemptId: string;
  deduplicated: boolean;
}

export interface StepRequest {
  chunk: number;
  inputSeqCutoff: number;
  atMs: number;
  /** Whether the client is still playing assistant audio (the model keeps speaking meanwhile). */
  assistantAudible: boolean;
  /**
   * A perception tick between two chunk boundaries (only for a session that declares
   * `perceptionTickMs`): hear the input up to the cutoff and judge overlaps now, so that a user who
   * takes the floor stops the assistant at once whatever the chunk size, but emit no assistant
   * output (no text, no audio, no new utterance). The chunk stays the unit of output.
   */
  listenOnly?: boolean;
}

export interface OutputStep {
  stepSeq: number;
  chunk: number;
  inputSeqCutoff: number;
  decision: 'listen' | 'speak';
  /** Raw text delta of this step, delegate tags included; the host parses and hides them. */
  text: string;
  /** Utterance that `text` and `audio` belong to; a new id starts a new utterance. */
  utteranceId: string | null;
  /** Up to one chunk of 24 kHz mono speech, or null. */
  audio: Int16Array | null;
  audioChunkSeq: number;
  /** The utterance's speech is fully emitted (the model's turn_eos). */
  turnFinished: boolean;
  finishReason?: 'completed' | 'interrupted';
  /** User utterances the model recognised since the last step (ports that hear words themselves). */
  userTranscripts?: UserTranscript[];
  /** Voice activity perceived in this chunk's user audio. */
  userSpeech?: { state: 'started' | 'stopped'; probability: number };
  /** The model's reading of overlapping user input while it was speaking. */
  interruption?: { action: InterruptionAction; cause: OverlapCause; cancelsWork: boolean };
  /** Utterance this one continues after a repair, or a parked plan it resumes. */
  continues?: { utteranceId?: string; planId?: string };
  /** The model offers to go back to a parked plan (park-and-follow). */
  resumeOffer?: { planId: string };
  /** Set on the first step of an utterance that speaks a prefilled `<backend>` result. */
  speaksPrefill?: { attemptId: string };
  /**
   * Segments of this utterance whose speech became known in this step (visible text and the length
   * of its audio), so the host computes what was heard with the same rule the model uses
   * (`heardText`). Optional: without them the host estimates one segment over the whole reply.
   */
  spokenSegments?: SpokenSegment[];
}

export interface ModelSession {
  readonly sessionId: string;
  readonly incarnation: number;
  /**
   * The session hears between chunk steps: while the assistant holds the floor the host sends a
   * `listenOnly` step about this often (ms). Absent: overlaps are judged at chunk boundaries only.
   */
  readonly perceptionTickMs?: number;
  appendAudio(input: { inputSeq: number; pcm16k: Int16Array }): Promise<InputAck>;
  appendText(input: { inputSeq: number; itemId: string; text: string }): Promise<InputAck>;
  appendVideoFrame(input: { inputSeq: number; mimeType: string; data: Uint8Array }): Promise<InputAck>;
  /**
   * A conversation item the client restored (history), in input order: it joins the context as if
   * it had happened, and the model does not answer it. A `system` entry joins the instructions.
   * Optional: a port without it (or one that rejects a role with `unsupported_feature`) cannot
   * take restored history, and the host says so with a coded error.
   */
  appendHistory?(input: { inputSeq: number; itemId: string } & ContextEntry): Promise<InputAck>;
  prefill(request: PrefillRequest): Promise<PrefillAck>;
  /**
   * Instructions for the model's next response only (OpenAI's `response.instructions`), after the
   * session's own. Optional: without it they are recorded as not applied and the client is told.
   */
  instructNextResponse?(input: { instructions: string }): Promise<void>;
  /**
   * Tells the model how much of an utterance the user heard. On a final acknowledgement the host
   * also sends `heardText`, computed by the one rule (`heardText` in this package): the model's
   * context keeps exactly that text of the utterance, so the timeline and the context agree.
   */
  playbackAck(input: { utteranceId: string; playedMs: number; final: boolean; heardText?: string }): Promise<void>;
  /** Stores a plan the runtime parked so the model can offer and resume it. */
  park(input: { planId: string; utteranceId: string; remainder: string }): Promise<void>;
  step(request: StepRequest): Promise<OutputStep>;
  /** Stops the current utterance now (client cancel). Optional: the host also drops late output of a cancelled utterance. */
  cancelResponse?(): Promise<void>;
  close(reason: string): Promise<void>;
}

export interface ModelPort {
  capabilities(): Promise<ModelCapabilities>;
  openSession(request: OpenSessionRequest): Promise<ModelSession>;
  close(): Promise<void>;
}
