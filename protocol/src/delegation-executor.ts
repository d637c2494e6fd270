import type { BackendResult, DelegationRequest } from './delegation.ts';
import type { WorkState } from './work-state.ts';

/**
 * What the background reports about a delegation. The session host turns each into timeline
 * events (`work.state`, `work.progress`, `work.result`).
 */
export type WorkEvent =
  | {
      kind: 'state';
      session: string;
      incarnation: number;
      workId: string;
      state: WorkState;
      reason?: string;
      functionName?: string;
    }
  | { kind: 'progress'; session: string; incarnation: number; workId: string; message: string; elapsedMs: number }
  | { kind: 'result'; session: string; incarnation: number; workId: string; result: BackendResult };

export type WorkEventListener = (event: WorkEvent) => void;

/**
 * The background loop as the foreground sees it: capture hands a request in, events come out.
 * Implementations: the in-process executor (embedded default) and BullMQ on Redis. `submit`
 * resolves once the request is accepted (QUEUED), never when the work finishes: the foreground
 * never waits for work.
 */
export interface DelegationExecutor {
  submit(request: DelegationRequest): Promise<void>;
  cancel(workId: string, reason: string): Promise<void>;
  /** Listens to the work of the given sessions' host; returns an unsubscribe function. */
  subscribe(listener: WorkEventListener): () => void;
  /**
   * Re-binds work another host submitted to this one (its session failed over here, now at
   * `incarnation`): the work's events, those already recorded included, reach this host's listeners
   * carrying the new incarnation. Optional: an executor without it leaves such work to its old host.
   */
  adopt?(work: { workId: string; session: string; incarnation: number }): Promise<void>;
  close(): Promise<void>;
}
