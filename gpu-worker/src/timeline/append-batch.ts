import type { TimelineEvent } from '@venus/protocol';
import { VenusError } from '@venus/protocol';

/** A batch that passed the checks every store makes before touching storage. */
export interface AppendBatch {
  session: string;
  firstSeq: number;
  lastSeq: number;
}

/**
 * Checks what can be checked without the stored log: one session per batch and seqs that step by
 * exactly one. Both stores call this first so a malformed batch is rejected the same way everywhere.
 * Returns null for an empty batch (a no-op).
 */
export function checkAppendBatch(events: readonly TimelineEvent[]): AppendBatch | null {
  const first = events[0];
  if (first === undefined) return null;
  for (let i = 1; i < events.length; i++) {
    const event = events[i]!;
    if (event.session !== first.session) {
      throw new VenusError(
        'wrong_session',
        `timeline append mixes sessions '${first.session}' and '${event.session}' in one batch`,
      );
    }
    if (event.seq !== first.seq + i) {
      throw new VenusError(
        'timeline_seq_conflict',
        `timeline append for '${first.session}' is not contiguous: seq ${event.seq} at position ${i} after first seq ${first.seq}`,
      );
    }
  }
  return { session: first.session, firstSeq: first.seq, lastSeq: first.seq + events.length - 1 };
}

export function seqConflict(session: string, storedLast: number, firstSeq: number): VenusError {
  return new VenusError(
    'timeline_seq_conflict',
    `timeline '${session}' ends at seq ${storedLast}; an append must start at ${storedLast + 1}, not ${firstSeq}`,
  );
}
