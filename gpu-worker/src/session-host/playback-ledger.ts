import { UtteranceHandle } from './utterance-handle.ts';

/** Utterances a session keeps handles for: acknowledgements for older ones are answered `wrong_session`. */
export const MAX_TRACKED_UTTERANCES = 256;

/**
 * Played-audio accounting for one session: the handles of its recent utterances, and until when the
 * assistant's emitted audio is still playing (assuming real-time playout). Bounded: only the latest
 * `MAX_TRACKED_UTTERANCES` utterances are kept.
 */
export class PlaybackLedger {
  private readonly utterances = new Map<string, UtteranceHandle>();
  private audibleUntilMs = 0;

  start(id: string): UtteranceHandle {
    const handle = new UtteranceHandle(id);
    this.utterances.set(id, handle);
    if (this.utterances.size > MAX_TRACKED_UTTERANCES) {
      const oldest = this.utterances.keys().next().value;
      if (oldest !== undefined) this.utterances.delete(oldest);
    }
    return handle;
  }

  get(id: string): UtteranceHandle | undefined {
    return this.utterances.get(id);
  }

  addAudio(u: UtteranceHandle, durationMs: number, nowMs: number): void {
    u.addAudio(durationMs, nowMs);
    this.audibleUntilMs = Math.max(this.audibleUntilMs, nowMs) + durationMs;
  }

  /** Whether assistant audio is still playing at `nowMs` (real-time estimate). */
  isAudible(nowMs: number): boolean {
    return nowMs < this.audibleUntilMs;
  }

  /** The client dropped its buffered audio (barge-in): nothing is audible any more. */
  clearAudible(nowMs: number): void {
    this.audibleUntilMs = Math.min(this.audibleUntilMs, nowMs);
  }
}
