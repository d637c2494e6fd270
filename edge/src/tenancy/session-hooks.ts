import type { TimelineEvent } from '@venus/protocol';
import type { ProtocolError } from '../realtime/protocol-error.ts';

/** Refused audio either earns the client an error event or, while a refusal is already reported, nothing. */
export type AudioAdmission = { ok: true } | { ok: false; error?: ProtocolError };

/**
 * What a RealtimeConnection tells its tenant's accounting: input audio before it is forwarded
 * (which may refuse it), every timeline event from the worker, and the end of the session.
 */
export interface SessionHooks {
  admitAudioIn(ms: number): AudioAdmission;
  observe(event: TimelineEvent): void;
  /** Called once, however the session ended. */
  ended(): void;
}
