import { BackendResultSchema, DelegationRequestSchema, type WorkEvent, WorkStateSchema } from '@venus/protocol';
import { TraceparentSchema } from '@venus/protocol/node';
import { z } from 'zod';

/** What a delegation job carries through Redis: the request, where its events go, and its deadline. */
export const DelegationJobSchema = z.object({
  request: DelegationRequestSchema,
  /** The events stream of the session host that submitted it. */
  eventsKey: z.string().min(1),
  acceptedAtMs: z.number().nonnegative(),
  /** The request timeout, fixed at acceptance: waiting in the queue counts against it. */
  deadlineAtMs: z.number().nonnegative(),
  /** The submitting host's trace of this delegation (W3C trace context), when tracing is on. */
  traceparent: TraceparentSchema.optional(),
});
export type DelegationJob = z.infer<typeof DelegationJobSchema>;

const Identity = { session: z.string().min(1), incarnation: z.number().int().nonnegative(), workId: z.string().min(1) };

/** A work event as stored in an events stream; read back at the producer's boundary. */
export const WorkEventSchema: z.ZodType<WorkEvent> = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('state'),
    ...Identity,
    state: WorkStateSchema,
    reason: z.string().optional(),
    functionName: z.string().optional(),
  }),
  z.object({ kind: z.literal('progress'), ...Identity, message: z.string(), elapsedMs: z.number() }),
  z.object({ kind: z.literal('result'), ...Identity, result: BackendResultSchema }),
]) as z.ZodType<WorkEvent>;
