import type { MessagePort } from 'node:worker_threads';
import type { ErrorCode, OutputStep, PrefillAck, PrefillRequest, StepRequest } from '@venus/protocol';

/**
 * Messages between the main thread, the inference workers and the TTS workers. All are small;
 * audio travels as transferred buffers. Sessions are addressed by a numeric handle the main thread
 * assigns, so a superseded incarnation and its successor never share worker state.
 */
export type SessionCall =
  | { op: 'step'; request: StepRequest }
  | { op: 'prefill'; request: PrefillRequest }
  | { op: 'playbackAck'; utteranceId: string; playedMs: number; final: boolean }
  | { op: 'park'; planId: string; utteranceId: string; remainder: string }
  | { op: 'cancelResponse' }
  | { op: 'close'; reason: string };

export interface SessionCallResult {
  step: OutputStep;
  prefill: PrefillAck;
  playbackAck: null;
  park: null;
  cancelResponse: null;
  close: null;
}

export type MainToInference =
  | { t: 'open'; id: number; handle: number; sessionId: string; incarnation: number; voice?: string }
  | { t: 'audio'; handle: number; inputSeq: number; pcm: Int16Array }
  | { t: 'text'; handle: number; inputSeq: number; text: string }
  | { t: 'call'; id: number; handle: number; call: SessionCall }
  /** Release native resources before the thread is terminated (terminating a live onnxruntime session aborts the process). */
  | { t: 'shutdown'; id: number }
  /** Test hook: the thread exits at once with code 1, as a native crash would. */
  | { t: 'crash' };

export type InferenceToMain =
  /** `stepCostMs` is NaN when the thread was started without calibration. */
  | { t: 'ready'; stepCostMs: number }
  | { t: 'reply'; id: number; ok: true; value: unknown }
  | { t: 'reply'; id: number; ok: false; code: ErrorCode; message: string };

export type TtsRequest = { t: 'synth'; id: number; text: string; voice: string };
export type TtsResponse = { t: 'audio'; id: number; pcm: Int16Array } | { t: 'error'; id: number; message: string };
export type TtsToMain = { t: 'ready'; synthMs: number };
/** Main -> TTS thread: serve one more inference thread (sent again for each replacement thread). */
export type TtsControl = { t: 'port'; port: MessagePort };

export interface InferenceWorkerData {
  ttsPorts: MessagePort[];
  maxBatch: number;
  /** Measure the step cost before reporting ready (default true; a replacement thread skips it). */
  calibrate?: boolean;
}

export interface TtsWorkerData {
  ports: MessagePort[];
}
