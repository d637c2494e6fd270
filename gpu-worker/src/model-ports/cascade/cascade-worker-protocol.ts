import type { ErrorCode } from '@venus/protocol';
import type { SessionCall } from '../../reference-model/worker-protocol.ts';
import type { CascadeConfig } from './cascade-config.ts';

/**
 * Messages between the main thread and a cascade worker. Session calls are the reference model's
 * (`SessionCall`), so both kinds of worker answer them the same way; only opening differs, since a
 * cascade session takes the client's instructions into its system prompt.
 */
export type MainToCascade =
  | {
      t: 'open';
      id: number;
      handle: number;
      sessionId: string;
      incarnation: number;
      voice?: string;
      instructions?: string;
    }
  | { t: 'audio'; handle: number; inputSeq: number; pcm: Int16Array }
  | { t: 'text'; handle: number; inputSeq: number; text: string }
  | { t: 'call'; id: number; handle: number; call: SessionCall }
  /** Release the VAD's onnxruntime session and abort every request before the thread is terminated. */
  | { t: 'shutdown'; id: number };

export type CascadeToMain =
  | { t: 'ready' }
  | { t: 'reply'; id: number; ok: true; value: unknown }
  | { t: 'reply'; id: number; ok: false; code: ErrorCode; message: string };

export interface CascadeWorkerData {
  config: CascadeConfig;
  maxBatch: number;
}
