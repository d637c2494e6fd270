import { z } from 'zod';

/**
 * JSON shapes of the official Realtime-Venus model HTTP service (`demos/model/server.py` in the
 * release), validated once where responses enter the adapter. Field names are the service's own.
 * Objects are loose: a newer service may add fields without breaking us.
 */
export const PROTOCOL_VERSION = 'realtime-venus-harness/2';

/** The twelve reserved tokens every served checkpoint must resolve to unique ids. */
export const VENUS_PROTOCOL_TOKENS = [
  '<|speak|>',
  '<|listen|>',
  '<|turn_eos|>',
  '<|chunk_eos|>',
  '<unit>',
  '</unit>',
  '<image>',
  '</image>',
  '<delegate>',
  '</delegate>',
  '<backend>',
  '</backend>',
] as const;

const nonNegInt = z.number().int().nonnegative();
const posInt = z.number().int().positive();

export const ErrorBodySchema = z.looseObject({ error: z.string(), type: z.string() });

export const HealthSchema = z.looseObject({
  ready: z.boolean(),
  model_revision: z.string().optional(),
  session: z
    .looseObject({ session_id: z.string(), incarnation: z.number().int(), closed: z.boolean() })
    .nullable()
    .optional(),
  /** Not in the single-session demo server; a multi-session service may list every session. */
  sessions: z
    .array(z.looseObject({ session_id: z.string(), incarnation: z.number().int(), closed: z.boolean() }))
    .optional(),
});
export type Health = z.infer<typeof HealthSchema>;

export const SessionCapabilitiesSchema = z.looseObject({
  special_token_ids: z.record(z.string(), nonNegInt),
  raw_token_mode: z.string(),
  same_kv_prefill: z.boolean().default(true),
  duplex_media: z.boolean().default(true),
  ordered_input_fence: z.boolean().default(true),
  native_audio_output: z.boolean().default(true),
  video_segments: z.boolean().default(false),
  max_sessions: posInt.default(1),
  delegate_audio_filtered: z.boolean().default(false),
});
export type SessionCapabilities = z.infer<typeof SessionCapabilitiesSchema>;

/** Every acknowledgement names the session and incarnation it applies to. */
const sessionIncarnation = { session_id: z.string(), incarnation: posInt };

export const SessionOpenedSchema = z.looseObject({
  session_id: z.string().min(1),
  incarnation: posInt,
  model: z.string().min(1),
  model_revision: z.string().min(1),
  capabilities: SessionCapabilitiesSchema,
  opened_at_ms: nonNegInt,
});
export type SessionOpened = z.infer<typeof SessionOpenedSchema>;

export const InputAcceptedSchema = z.looseObject({
  ...sessionIncarnation,
  event_seq: posInt,
  input_seq: posInt,
  accepted_at_ms: nonNegInt,
});
export type InputAccepted = z.infer<typeof InputAcceptedSchema>;

export const PrefillAppliedSchema = z.looseObject({
  ...sessionIncarnation,
  work_id: z.string(),
  attempt_id: z.string(),
  generation_id: z.string().min(1),
  generation_epoch: nonNegInt,
  kv_position: nonNegInt,
  applied_at_ms: nonNegInt,
  deduplicated: z.boolean().default(false),
});
export type PrefillApplied = z.infer<typeof PrefillAppliedSchema>;

export const PlaybackAcceptedSchema = z.looseObject({
  ...sessionIncarnation,
  utterance_id: z.string(),
  cumulative_played_chunks: nonNegInt,
  accepted_at_ms: nonNegInt,
});

export const SessionClosedSchema = z.looseObject({
  ...sessionIncarnation,
  closed_at_ms: nonNegInt,
});

/** The release sends an object; the shorter form (bare base64) is accepted too. */
export const GeneratedAudioSchema = z.union([
  z.string(),
  z.looseObject({
    data: z.string(),
    sample_rate_hz: posInt.default(24_000),
    channels: posInt.default(1),
    sample_width_bytes: posInt.default(2),
    format: z.string().default('pcm_s16le'),
  }),
]);

export const ModelOutputStepSchema = z.looseObject({
  ...sessionIncarnation,
  generation_id: z.string().min(1),
  generation_epoch: nonNegInt,
  step_seq: posInt,
  input_seq_cutoff: nonNegInt,
  at_ms: nonNegInt,
  total_token_ids: z.array(nonNegInt),
  audio: GeneratedAudioSchema.nullable().default(null),
  audio_chunk_seq: posInt.nullable().default(null),
  turn_finished: z.boolean(),
  finish_reason: z.string().nullable().default(null),
});
export type ModelOutputStep = z.infer<typeof ModelOutputStepSchema>;
