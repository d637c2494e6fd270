import { z } from 'zod';
import { ClientFunctionsSchema } from './client-functions.ts';
import { DeliveryPolicySchema } from './delegation.ts';

/** Per-session settings the foreground loop runs under. */
export const SessionConfigSchema = z.object({
  /** Chunk period of the foreground loop. 1000 ms as in the paper; 160 ms for finer control. */
  chunkMs: z.number().int().min(40).max(2000).default(1000),
  /** Default delivery policy for results whose function or request names none. */
  deliveryPolicy: DeliveryPolicySchema.default('when_idle'),
  voice: z.string().min(1).max(64).default('en-us'),
  instructions: z.string().max(20_000).optional(),
  /** The client's own functions (its declared tools), offered to the planner with every delegation. */
  tools: ClientFunctionsSchema.optional(),
  /**
   * Where delegations go: the harness (default), or every one straight to the client as a call of
   * CLIENT_DELEGATION (GPT-Live's client delegation).
   */
  delegation: z.enum(['harness', 'client']).optional(),
});
export type SessionConfig = z.infer<typeof SessionConfigSchema>;
export type SessionConfigInput = z.input<typeof SessionConfigSchema>;

export const AUDIO = {
  /** Model input: 16 kHz mono s16le. */
  inputSampleRateHz: 16_000,
  /** Model output: 24 kHz mono s16le. */
  outputSampleRateHz: 24_000,
  /** Largest single audio append the edge accepts (decoded bytes): 10 s of 24 kHz s16. */
  maxAppendBytes: 480_000,
} as const;
