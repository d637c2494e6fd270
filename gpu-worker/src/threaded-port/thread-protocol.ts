import type { ContextRole, ErrorCode, OutputStep, PrefillAck, PrefillRequest, StepRequest } from '@venus/protocol';

/**
 * Messages between the main thread and a thread that hosts model sessions (the reference model's
 * inference threads, the cascade's, the ONNX bundle's). All are small; audio travels as transferred
 * buffers. Sessions are addressed by a numeric handle the main thread assigns, so a superseded
 * incarnation and its successor never share thread state.
 */
export type SessionCall =
  | { op: 'step'; request: StepRequest }
  | { op: 'prefill'; request: PrefillRequest }
  | { op: 'playbackAck'; utteranceId: string; playedMs: number; final: boolean; heardText?: string }
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

/** What opens a session on a thread; each port's `open` message adds its own fields. */
export interface OpenMessage {
  t: 'open';
  id: number;
  handle: number;
  sessionId: string;
  incarnation: number;
}

/** The messages a session thread takes from the main thread, `O` being its port's `open`. */
export type SessionThreadMessage<O extends OpenMessage = OpenMessage> =
  | O
  | { t: 'audio'; handle: number; inputSeq: number; pcm: Int16Array }
  | { t: 'text'; handle: number; inputSeq: number; text: string }
  /** A restored conversation item: an input like text, taken into the context and not answered. */
  | { t: 'history'; handle: number; inputSeq: number; role: ContextRole; text: string }
  /** Instructions for the session's next response only (ports whose setup says it takes them). */
  | { t: 'instructions'; handle: number; text: string }
  | { t: 'call'; id: number; handle: number; call: SessionCall }
  /** Release native resources before the thread is terminated (terminating a live onnxruntime session aborts the process). */
  | { t: 'shutdown'; id: number }
  /** Test hook: the thread exits at once with code 1, as a native crash would. */
  | { t: 'crash' };

/** A session thread's answer to a call, matched by id. */
export type ThreadReply =
  | { t: 'reply'; id: number; ok: true; value: unknown }
  | { t: 'reply'; id: number; ok: false; code: ErrorCode; message: string };
