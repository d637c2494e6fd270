import type { MessagePort } from 'node:worker_threads';
import type { ContextEntry, RecogniserGrammar } from '@venus/protocol';
import type { OpenMessage, SessionThreadMessage, ThreadReply } from '../threaded-port/thread-protocol.ts';

/**
 * Messages of the reference model's threads: session calls are the threaded port's
 * (`SessionThreadMessage`); opening names a voice; the TTS threads take synthesis requests over a
 * message port of their own per inference thread.
 */
export type ReferenceOpen = OpenMessage & {
  voice?: string;
  phrases?: readonly string[];
  /** A resumed session's context, rebuilt from its timeline (OpenSessionRequest.history, .parked). */
  history?: readonly ContextEntry[];
  parked?: { planId: string; utteranceId: string; remainder: string };
};
export type MainToInference = SessionThreadMessage<ReferenceOpen>;

export type InferenceToMain =
  /** `stepCostMs` is NaN when the thread was started without calibration. */
  { t: 'ready'; stepCostMs: number } | ThreadReply;

export type TtsRequest = { t: 'synth'; id: number; text: string; voice: string };
export type TtsResponse = { t: 'audio'; id: number; pcm: Int16Array } | { t: 'error'; id: number; message: string };
export type TtsToMain = { t: 'ready'; synthMs: number };
/** Main -> TTS thread: serve one more inference thread (sent again for each replacement thread). */
export type TtsControl = { t: 'port'; port: MessagePort };

export interface InferenceWorkerData {
  ttsPorts: MessagePort[];
  maxBatch: number;
  /** Hear words: the grammar every session's recogniser stream starts from; absent: no recognition. */
  recognition?: { grammar: RecogniserGrammar; maxStreams: number };
  /** Measure the step cost before reporting ready (default true; a replacement thread skips it). */
  calibrate?: boolean;
}

export interface TtsWorkerData {
  ports: MessagePort[];
}
