import { VenusError, type WorkSnapshotEntry, type WorkState } from '@venus/protocol';
import { z } from 'zod';
import type { VenusFunction } from '../function-definition.ts';

export const WorkStatusArgsSchema = z.object({});
export type WorkStatusArgs = z.infer<typeof WorkStatusArgsSchema>;

export const WORK_STATUS_FUNCTION = 'work_status';

/**
 * Whether a query asks how earlier work stands ("what is the status of my requests?", "how's that
 * going?", "is it done yet?"). Like any function's extract, it keeps the function from answering
 * queries that merely share a word with it ("I am going to Tokyo").
 */
export function asksForWorkStatus(query: string): boolean {
  return (
    /\b(status|progress|pending)\b/i.test(query) ||
    /\bhow(?:'s| is| are)\b.*\b(going|coming along|getting on)\b/i.test(query) ||
    /\b(done|finished|ready)\s+yet\b/i.test(query)
  );
}

/** Works the listener is still waiting on; delivered, failed, cancelled and expired ones are over. */
const PENDING: ReadonlySet<WorkState> = new Set(['QUEUED', 'RUNNING', 'COMPLETED', 'DELIVERING']);

/** One spoken sentence per pending work, or that nothing is pending. */
export function describeWorkStatus(snapshot: readonly WorkSnapshotEntry[]): { text: string; pending: number } {
  const lines = snapshot
    // An earlier status question is not work the listener is waiting on.
    .filter((w) => PENDING.has(w.state) && w.functionName !== WORK_STATUS_FUNCTION)
    .map((w) => {
      const seconds = Math.max(1, Math.round(w.ageMs / 1000));
      const where =
        w.state === 'QUEUED'
          ? 'is waiting to start'
          : w.state === 'RUNNING'
            ? `is still running, ${seconds} seconds so far`
            : 'is done, and I will tell you in a moment';
      return `"${w.query}" ${where}.`;
    });
  return { text: lines.length > 0 ? lines.join(' ') : 'Nothing is pending right now.', pending: lines.length };
}

/**
 * Answers "how's that going?" from the work snapshot the delegation carries (the session's other
 * works as they stood when the question was delegated). It is an ordinary function: the planner
 * picks it from its description and examples, and its answer goes through the same lifecycle and
 * admission as any other result. No simulated latency: the answer is already at hand.
 *
 * @example
 *   const fn = createWorkStatus();
 *   await fn.run({}, { ...ctx, workSnapshot: [{ workId: 'w1', query: 'weather in Paris', state: 'RUNNING', ageMs: 4000 }] });
 *   // { speech: '"weather in Paris" is still running, 4 seconds so far.', data: { pending: 1 } }
 */
export function createWorkStatus(): VenusFunction<WorkStatusArgs> {
  return {
    name: WORK_STATUS_FUNCTION,
    description: 'Where the requests handed off earlier in this conversation stand: running, waiting or done.',
    parameters: WorkStatusArgsSchema,
    examples: [
      'What is the status of my pending requests?',
      "How's that going?",
      'Is my lookup done yet?',
      'Any progress on my tasks?',
    ],
    keywords: ['pending', 'request', 'task', 'lookup', 'work', 'going', 'done', 'yet', 'progress', 'status'],
    extract: (query) => (asksForWorkStatus(query) ? {} : null),
    async run(_args, ctx) {
      if (ctx.workSnapshot === undefined) {
        throw new VenusError('function_failed', "I can't see your other requests from here");
      }
      const { text, pending } = describeWorkStatus(ctx.workSnapshot);
      return { speech: text, data: { pending } };
    },
  };
}
