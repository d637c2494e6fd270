import {
  type BackendResult,
  DELEGATION_LIMITS,
  isInFlight,
  type VenusError,
  type WorkSnapshotEntry,
  type WorkState,
} from '@venus/protocol';
import { type BoundaryPlan, type BoundaryState, type PendingResult, planBoundary } from './admission.ts';
import { WorkLedger, type WorkRecord } from './work-ledger.ts';

export type DelegateRefusal = { code: VenusError['code']; message: string };

/**
 * One session's delegations: the works and their states, the results that landed and wait for
 * admission (at most `maxBufferedResultsPerSession`; the oldest is expired past it), and the rules
 * for taking a new delegation (query length, in-flight limit). No I/O: the runtime records what it
 * decides on the timeline.
 */
export class DelegationBook {
  readonly works = new WorkLedger();
  private pending: PendingResult[] = [];
  private counter = 0;

  constructor(private readonly sessionId: string) {}

  /** Why a new delegation with `query` cannot be taken now, or null when it can. */
  refuse(query: string): DelegateRefusal | null {
    const { maxQueryChars, maxInFlightPerSession } = DELEGATION_LIMITS;
    if (query.length > maxQueryChars)
      return {
        code: 'delegate_query_too_long',
        message: `delegate query of ${query.length} chars exceeds ${maxQueryChars}`,
      };
    if (this.works.inFlightCount() >= maxInFlightPerSession)
      return { code: 'delegate_limit_reached', message: `${maxInFlightPerSession} delegations already in flight` };
    return null;
  }

  open(utteranceId: string, query: string, incarnation: number, nowMs: number): WorkRecord {
    const workId = `work_${this.sessionId.slice(-8)}_${incarnation}_${++this.counter}`;
    return this.works.add(workId, utteranceId, query, nowMs);
  }

  /** The session's other works as they stand, for a delegation's request (status questions). */
  snapshot(exceptWorkId: string, nowMs: number): WorkSnapshotEntry[] {
    return this.works
      .all()
      .filter((w) => w.workId !== exceptWorkId)
      .slice(-DELEGATION_LIMITS.maxWorkSnapshotEntries)
      .map((w) => ({
        workId: w.workId,
        query: w.query.slice(0, DELEGATION_LIMITS.maxQueryChars),
        state: w.state,
        ageMs: Math.max(0, nowMs - w.createdAtMs),
        ...(w.functionName ? { functionName: w.functionName } : {}),
      }));
  }

  /**
   * A result landed (its `work.result` event is `resultSeq` in `landedChunk`). Returns the work id
   * expired to make room when the buffer overflowed.
   */
  land(result: BackendResult, resultSeq: number, landedChunk: number, landedAtMs: number): string | null {
    const work = this.works.get(result.workId);
    if (work) work.resultSeq = resultSeq;
    this.pending.push({ result, resultSeq, landedChunk, landedAtMs, busyAtFirstBoundary: null });
    if (this.pending.length <= DELEGATION_LIMITS.maxBufferedResultsPerSession) return null;
    return this.pending.shift()?.result.workId ?? null;
  }

  get waiting(): readonly PendingResult[] {
    return this.pending;
  }

  /** Plans admission at a boundary and keeps what waits on. */
  planBoundary(state: BoundaryState): BoundaryPlan {
    const plan = planBoundary(this.pending, state);
    this.pending = plan.keep;
    return plan;
  }

  /** Forgets a waiting result (its work was cancelled). */
  dropPending(workId: string): void {
    this.pending = this.pending.filter((p) => p.result.workId !== workId);
  }

  /** Works of `utteranceId` that a cancel can still stop (not yet delivering). */
  cancellable(utteranceId: string | null): string[] {
    return this.works
      .all()
      .filter((w) => w.utteranceId === utteranceId && CANCELLABLE.includes(w.state))
      .map((w) => w.workId);
  }

  /** The utterance that made the most recent work still cancellable. */
  lastCancellableUtterance(): string | null {
    return (
      this.works
        .all()
        .filter((w) => CANCELLABLE.includes(w.state))
        .at(-1)?.utteranceId ?? null
    );
  }

  /** Works still queued or running (what a closing session cancels). */
  inFlight(): WorkRecord[] {
    return this.works.open().filter((w) => isInFlight(w.state) && w.state !== 'CANCELLING');
  }
}

const CANCELLABLE: readonly WorkState[] = ['QUEUED', 'RUNNING', 'COMPLETED'];
