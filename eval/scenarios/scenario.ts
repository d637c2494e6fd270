import { z } from 'zod';

/**
 * What one evaluation sample is. The on-disk layout follows Full-Duplex-Bench v1.5: a folder with
 * `input.wav` (16 kHz mono, with the overlap), `clean_input.wav` (the same without it) and
 * `metadata.json` (`context_text`, `current_turn_text`, overlap `timestamps: [start, end]` in seconds).
 * Our own fields live under `venus_eval`: the set, the behaviour the sample expects, where each
 * sound sits, and the transcript events a client-side ASR would send alongside the audio.
 */
export const V15_SETS = ['user_interruption', 'user_backchannel', 'talking_to_other', 'background_speech'] as const;
export const V1_SETS = ['pause_handling', 'smooth_turn_taking'] as const;
export const EVAL_SETS = [...V15_SETS, ...V1_SETS, 'delegation'] as const;
export const EvalSetSchema = z.enum(EVAL_SETS);
export type EvalSet = z.infer<typeof EvalSetSchema>;

export const DELEGATION_KINDS = [
  'lands_while_assistant_speaks',
  'lands_while_user_speaks',
  'cancelled',
  'second_request',
] as const;
export const DelegationKindSchema = z.enum(DELEGATION_KINDS);
export type DelegationKind = z.infer<typeof DelegationKindSchema>;

/**
 * respond: stop and answer the overlapping speech; resume: keep talking through it; hold: do not
 * take the turn in the user's pause; take_turn: answer when the user's turn ends; deliver /
 * cancel: what should become of the delegated work.
 */
export const ExpectedSchema = z.enum(['respond', 'resume', 'hold', 'take_turn', 'deliver', 'cancel']);
export type Expected = z.infer<typeof ExpectedSchema>;

export const TranscriptEventSchema = z.object({
  /** Seconds from the start of the input at which the client sends the text. */
  at: z.number().nonnegative(),
  text: z.string().min(1),
});
export type TranscriptEvent = z.infer<typeof TranscriptEventSchema>;

export const SegmentRoleSchema = z.enum(['user', 'other_directed', 'background', 'noise']);
export type SegmentRole = z.infer<typeof SegmentRoleSchema>;

export const SegmentSchema = z.object({
  role: SegmentRoleSchema,
  text: z.string(),
  start: z.number().nonnegative(),
  end: z.number().nonnegative(),
  voice: z.string().optional(),
  level_dbfs: z.number(),
  /** Part of the overlap event: left out of clean_input.wav. */
  overlap: z.boolean().default(false),
});
export type Segment = z.infer<typeof SegmentSchema>;

export const VenusEvalSchema = z.object({
  version: z.literal(1),
  set: EvalSetSchema,
  id: z.string().min(1),
  source: z.enum(['synthetic', 'full-duplex-bench']),
  expected: ExpectedSchema,
  duration: z.number().positive(),
  transcripts: z.array(TranscriptEventSchema),
  segments: z.array(SegmentSchema),
  delegation: z.object({ kind: DelegationKindSchema, requests: z.number().int().positive() }).optional(),
});
export type VenusEval = z.infer<typeof VenusEvalSchema>;

export const SampleMetadataSchema = z
  .object({
    context_text: z.string().default(''),
    current_turn_text: z.string().default(''),
    timestamps: z.tuple([z.number(), z.number()]),
    venus_eval: VenusEvalSchema.optional(),
  })
  .loose();
export type SampleMetadata = z.infer<typeof SampleMetadataSchema>;

/** A sample ready to run: its folder, its metadata (with our fields filled in) and its 16 kHz input. */
export interface Sample {
  dir: string;
  meta: SampleMetadata & { venus_eval: VenusEval };
  input: Int16Array;
}

export function sampleKey(s: Pick<VenusEval, 'set' | 'id'>): string {
  return `${s.set}/${s.id}`;
}
