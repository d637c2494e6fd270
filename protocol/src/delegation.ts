import { z } from 'zod';
import { ClientCallSchema, ClientFunctionsSchema } from './client-functions.ts';

/** Client functions travel with delegations; their schemas and limits are exported from here. */
export * from './client-functions.ts';

import { WorkStateSchema } from './work-state.ts';

/** Limits from the official harness (see README "Limits"). */
export const DELEGATION_LIMITS = {
  maxQueryChars: 4000,
  maxResultChars: 3000,
  resultTtlMs: 600_000,
  requestTimeoutMs: 180_000,
  maxInFlightPerSession: 8,
  maxBufferedResultsPerSession: 16,
  /** Entries a request's `workSnapshot` keeps (the youngest); a status answer needs no more. */
  maxWorkSnapshotEntries: 16,
  /** Delivery under `when_idle` waits for this much silence first, never less than the minimum. */
  deliverySilenceMs: 800,
  deliverySilenceMinMs: 250,
  progressFirstMs: 30_000,
  progressEveryMs: 60_000,
} as const;

/**
 * When an admitted result may be spoken (Gemini Live's non-blocking scheduling, plus one):
 * - `interrupt`: at the next chunk boundary, cutting in on the assistant if needed;
 * - `when_idle` (default): at the first boundary where neither side is speaking;
 * - `silent`: into the model's context only, never spoken;
 * - `skip_if_busy`: like `when_idle`, but dropped (EXPIRED) if the user is mid-turn when it lands.
 */
export const DeliveryPolicySchema = z.enum(['interrupt', 'when_idle', 'silent', 'skip_if_busy']);
export type DeliveryPolicy = z.infer<typeof DeliveryPolicySchema>;

export const WorkIdSchema = z.string().min(1).max(128);

/** One of the session's other works as it stood when a delegation was made. */
export const WorkSnapshotEntrySchema = z.object({
  workId: WorkIdSchema,
  /** Truncated rather than refused: a long query elsewhere must not make this delegation fail. */
  query: z.string().transform((q) => q.slice(0, DELEGATION_LIMITS.maxQueryChars)),
  state: WorkStateSchema,
  /** Time since that work was delegated, on the session clock. */
  ageMs: z.number().nonnegative(),
  functionName: z.string().max(128).optional(),
});
export type WorkSnapshotEntry = z.infer<typeof WorkSnapshotEntrySchema>;

/**
 * The session's other works at the moment of delegation (what a status question is answered
 * from). Bounded to the youngest `maxWorkSnapshotEntries`, order kept, so a long session cannot
 * grow a request or its job.
 */
export const WorkSnapshotSchema = z.array(WorkSnapshotEntrySchema).transform((entries) => {
  const max = DELEGATION_LIMITS.maxWorkSnapshotEntries;
  if (entries.length <= max) return entries;
  const youngest = new Set(
    entries
      .map((e, i) => ({ ageMs: e.ageMs, i }))
      .sort((a, b) => a.ageMs - b.ageMs || a.i - b.i)
      .slice(0, max)
      .map((e) => e.i),
  );
  return entries.filter((_, i) => youngest.has(i));
});

/** What the foreground hands to the background: plain language plus where the evidence ends. */
export const DelegationRequestSchema = z.object({
  workId: WorkIdSchema,
  session: z.string().min(1),
  incarnation: z.number().int().nonnegative(),
  tenant: z.string().min(1).default('default'),
  query: z.string().trim().min(1).max(DELEGATION_LIMITS.maxQueryChars),
  /** Last timeline seq visible to the delegation: the timeline as it stood at the opening `<delegate>` tag. */
  evidenceCutoffSeq: z.number().int().nonnegative(),
  /** Chunk during which the span closed. */
  chunk: z.number().int().nonnegative(),
  policy: DeliveryPolicySchema.optional(),
  createdAtMs: z.number().nonnegative(),
  /** The session's other works at the moment of delegation; absent when the host sends none. */
  workSnapshot: WorkSnapshotSchema.optional(),
  /** The session's client functions (its declared tools): candidates the planner may pick besides its own. */
  clientFunctions: ClientFunctionsSchema.optional(),
});
export type DelegationRequest = z.infer<typeof DelegationRequestSchema>;
export type DelegationRequestInput = z.input<typeof DelegationRequestSchema>;

export const RESULT_URGENCIES = ['correction', 'need_input', 'approval', 'important', 'progress'] as const;
export const ResultUrgencySchema = z.enum(RESULT_URGENCIES);
export type ResultUrgency = z.infer<typeof ResultUrgencySchema>;

/** What the background hands back: a short spoken-style reply, checked for size and freshness. */
export const BackendResultSchema = z.object({
  workId: WorkIdSchema,
  session: z.string().min(1),
  incarnation: z.number().int().nonnegative(),
  ok: z.boolean(),
  /** Spoken-style text for the model, without reserved protocol tags. */
  text: z.string().max(DELEGATION_LIMITS.maxResultChars),
  /** Structured output of the function, for clients and audits; never spoken as is. */
  data: z.unknown().optional(),
  functionName: z.string().optional(),
  policy: DeliveryPolicySchema,
  /**
   * How the host orders it among waiting results (the official harness's scheduling): a
   * correction, a question that needs the user's input, an approval or an important result goes
   * before ordinary ones; `progress` goes last. Absent: an ordinary result.
   */
  urgency: ResultUrgencySchema.optional(),
  /**
   * The planner picked a client function: the harness did not run it, and this is the call the
   * client is to make. The session host waits for the client's output as the work's real result.
   */
  clientCall: ClientCallSchema.optional(),
  completedAtMs: z.number().nonnegative(),
  expiresAtMs: z.number().nonnegative(),
});
export type BackendResult = z.infer<typeof BackendResultSchema>;

const RESERVED_TAG = /<\/?\s*(delegate|backend|parked)\b[^>]*>/gi;

/** Strips reserved protocol tags so a result can never open or close a span in the model's context. */
export function stripReservedTags(text: string): string {
  return text.replace(RESERVED_TAG, '');
}
