import { type BackendResult, canTransition, isInFlight, isTerminal, type WorkState } from '@venus/protocol';

/** One delegation as the session host tracks it. */
export interface WorkRecord {
  workId: string;
  state: WorkState;
  utteranceId: string | null;
  /** Seq of its `work.result` event once landed; a second result is a duplicate and is dropped. */
  resultSeq: number | null;
  attemptId: string | null;
  /** Utterance that speaks the result once admitted. */
  deliveredBy: string | null;
  /** The plain-language request, and when it was made (session clock). */
  query: string;
  createdAtMs: number;
  /** The function the harness chose for it, once it said. */
  functionName?: string;
  /** Set while the work waits for the client to run its client function (session clock). */
  clientCall?: { callId: string; name: string; askedAtMs: number; policy: BackendResult['policy'] };
  /** Taken over from an earlier incarnation of the session (failover): its result is this one's. */
  rebound?: true;
}

/** Works a session remembers; past it, the oldest finished ones are forgotten (open ones never are). */
export const MAX_TRACKED_WORKS = 256;

/**
 * Work states of one session's delegations, enforcing the lifecycle's transitions so that a late or
 * repeated report (a retried job, a result after a cancel) can never move work backwards.
 */
export class WorkLedger {
  private readonly works = new Map<string, WorkRecord>();

  add(workId: string, utteranceId: string | null, query = '', createdAtMs = 0): WorkRecord {
    const record: WorkRecord = {
      workId,
      query,
      createdAtMs,
      state: 'QUEUED',
      utteranceId,
      resultSeq: null,
      attemptId: null,
      deliveredBy: null,
    };
    this.works.set(workId, record);
    if (this.works.size > MAX_TRACKED_WORKS) this.evictOldestFinished();
    return record;
  }

  get(workId: string): WorkRecord | undefined {
    return this.works.get(workId);
  }

  byAttempt(attemptId: string): WorkRecord | undefined {
    for (const w of this.works.values()) if (w.attemptId === attemptId) return w;
    return undefined;
  }

  /** Applies a transition if the lifecycle allows it; returns whether it did. QUEUED is the implicit start. */
  transition(workId: string, to: WorkState): boolean {
    const w = this.works.get(workId);
    if (!w) return false;
    if (w.state === to) return false;
    if (!canTransition(w.state, to)) return false;
    w.state = to;
    return true;
  }

  inFlightCount(): number {
    let n = 0;
    for (const w of this.works.values()) if (isInFlight(w.state)) n += 1;
    return n;
  }

  /** Work that has not reached a terminal state (still cancellable or deliverable). */
  open(): WorkRecord[] {
    return [...this.works.values()].filter((w) => !isTerminal(w.state));
  }

  all(): WorkRecord[] {
    return [...this.works.values()];
  }

  private evictOldestFinished(): void {
    for (const [id, w] of this.works) {
      if (!isTerminal(w.state)) continue;
      this.works.delete(id);
      if (this.works.size <= MAX_TRACKED_WORKS) return;
    }
  }
}
