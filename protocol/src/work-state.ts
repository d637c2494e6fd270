import { z } from 'zod';

/**
 * Lifecycle of one delegation, as in the official Realtime-Venus harness plus EXPIRED:
 * QUEUED -> RUNNING -> COMPLETED -> DELIVERING -> DELIVERED, or FAILED; CANCELLING -> CANCELLED;
 * EXPIRED when a result outlives its TTL (or is dropped under `skip_if_busy`) before delivery.
 */
export const WORK_STATES = [
  'QUEUED',
  'RUNNING',
  'COMPLETED',
  'DELIVERING',
  'DELIVERED',
  'FAILED',
  'CANCELLING',
  'CANCELLED',
  'EXPIRED',
] as const;

export const WorkStateSchema = z.enum(WORK_STATES);
export type WorkState = z.infer<typeof WorkStateSchema>;

const NEXT: Record<WorkState, readonly WorkState[]> = {
  QUEUED: ['RUNNING', 'FAILED', 'CANCELLING'],
  RUNNING: ['COMPLETED', 'FAILED', 'CANCELLING', 'QUEUED'],
  COMPLETED: ['DELIVERING', 'DELIVERED', 'EXPIRED', 'CANCELLING'],
  DELIVERING: ['DELIVERED', 'EXPIRED', 'CANCELLING'],
  DELIVERED: [],
  FAILED: ['DELIVERING', 'DELIVERED', 'EXPIRED'],
  CANCELLING: ['CANCELLED'],
  CANCELLED: [],
  EXPIRED: [],
};

/** Whether `to` may follow `from`. RUNNING -> QUEUED is a retry; FAILED may still be delivered as an apology. */
export function canTransition(from: WorkState, to: WorkState): boolean {
  return NEXT[from].includes(to);
}

export function isTerminal(state: WorkState): boolean {
  return NEXT[state].length === 0;
}

/** States in which the work still occupies one of the session's in-flight slots. */
export function isInFlight(state: WorkState): boolean {
  return state === 'QUEUED' || state === 'RUNNING' || state === 'CANCELLING';
}
