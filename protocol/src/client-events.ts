import { z } from 'zod';
import { CLIENT_FUNCTION_LIMITS, DeliveryPolicySchema } from './delegation.ts';

/**
 * Client -> server events of the public realtime protocol: an OpenAI-Realtime-compatible subset
 * plus `venus.*` extensions. Unknown fields are tolerated (clients send more than we read);
 * unknown event types are answered with an `unknown_event_type` error naming the event.
 */
const eventId = z.string().max(256).optional();

export const AudioFormatSchema = z.enum(['pcm16', 'audio/pcm', 'g711_ulaw', 'audio/pcmu', 'g711_alaw', 'audio/pcma']);
export type AudioFormat = z.infer<typeof AudioFormatSchema>;

const audioFormatField = z.union([
  AudioFormatSchema,
  z.object({ type: AudioFormatSchema, rate: z.number().optional() }),
]);

export const SessionUpdateSchema = z.object({
  type: z.literal('session.update'),
  event_id: eventId,
  session: z
    .object({
      instructions: z.string().max(20_000).optional(),
      voice: z.string().max(64).optional(),
      input_audio_format: audioFormatField.optional(),
      output_audio_format: audioFormatField.optional(),
      modalities: z.array(z.string()).optional(),
      output_modalities: z.array(z.string()).optional(),
      audio: z
        .object({
          input: z.object({ format: audioFormatField.optional() }).loose().optional(),
          output: z.object({ format: audioFormatField.optional(), voice: z.string().optional() }).loose().optional(),
        })
        .loose()
        .optional(),
      turn_detection: z.unknown().optional(),
      tools: z.array(z.unknown()).optional(),
      venus: z
        .object({
          chunk_ms: z.number().int().min(40).max(2000).optional(),
          delivery_policy: DeliveryPolicySchema.optional(),
          /** Whether this client sends `venus.playback.ack`; otherwise the edge estimates playout. */
          playback_acks: z.boolean().optional(),
          /**
           * Whether `venus.timeline` also carries the per-chunk audio records (`assistant.audio`,
           * `user.audio`): one message per chunk each, which consoles drawing lanes want and OpenAI
           * clients do not. Off by default; every other timeline event is always sent.
           */
          timeline_audio: z.boolean().optional(),
          /** `client`: every delegation goes to the client as a `delegation` function call (no harness). */
          delegation: z.enum(['harness', 'client']).optional(),
        })
        .optional(),
    })
    .loose(),
});

/** Content of a created message: user parts, and the assistant's (GA `output_*`, beta `text`/`audio`) for history. */
const ContentPartSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('input_text'), text: z.string().max(20_000) }),
  z.object({ type: z.literal('text'), text: z.string().max(20_000) }),
  z.object({ type: z.literal('output_text'), text: z.string().max(20_000) }),
  z.object({
    type: z.literal('input_audio'),
    audio: z.string().nullable().optional(),
    transcript: z.string().max(20_000).nullable().optional(),
  }),
  z.object({
    type: z.enum(['output_audio', 'audio']),
    audio: z.string().nullable().optional(),
    transcript: z.string().max(20_000).nullable().optional(),
  }),
]);

const itemStatus = z.enum(['in_progress', 'completed', 'incomplete']).optional();

export const ClientEventSchema = z.discriminatedUnion('type', [
  SessionUpdateSchema,
  z.object({ type: z.literal('input_audio_buffer.append'), event_id: eventId, audio: z.string() }),
  z.object({ type: z.literal('input_audio_buffer.commit'), event_id: eventId }),
  z.object({ type: z.literal('input_audio_buffer.clear'), event_id: eventId }),
  z.object({ type: z.literal('output_audio_buffer.clear'), event_id: eventId }),
  z.object({
    type: z.literal('conversation.item.create'),
    event_id: eventId,
    previous_item_id: z.string().nullable().optional(),
    item: z.discriminatedUnion('type', [
      z
        .object({
          id: z.string().max(128).optional(),
          type: z.literal('message'),
          role: z.enum(['user', 'assistant', 'system']),
          /** A user message with a status is a record of a past turn (history), not a new one. */
          status: itemStatus,
          content: z.array(ContentPartSchema).min(1).max(32),
        })
        .loose(),
      /** A function call restored as history; its `function_call_output` completes it. */
      z
        .object({
          id: z.string().max(128).optional(),
          type: z.literal('function_call'),
          status: itemStatus,
          call_id: z.string().min(1).max(160),
          name: z.string().min(1).max(64),
          arguments: z.string().max(CLIENT_FUNCTION_LIMITS.maxArgumentsChars).default('{}'),
        })
        .loose(),
      /** A client function's output, answering the server's `function_call` item of the same `call_id`. */
      z
        .object({
          id: z.string().max(128).optional(),
          type: z.literal('function_call_output'),
          call_id: z.string().min(1).max(160),
          output: z.string().max(CLIENT_FUNCTION_LIMITS.maxOutputChars),
        })
        .loose(),
    ]),
  }),
  z.object({ type: z.literal('conversation.item.retrieve'), event_id: eventId, item_id: z.string().max(128) }),
  z.object({ type: z.literal('conversation.item.delete'), event_id: eventId, item_id: z.string().max(128) }),
  z.object({
    type: z.literal('conversation.item.truncate'),
    event_id: eventId,
    item_id: z.string(),
    content_index: z.number().int().nonnegative().default(0),
    audio_end_ms: z.number().int().nonnegative(),
  }),
  z.object({ type: z.literal('response.create'), event_id: eventId, response: z.unknown().optional() }),
  z.object({ type: z.literal('response.cancel'), event_id: eventId, response_id: z.string().optional() }),
  z.object({
    type: z.literal('venus.playback.ack'),
    event_id: eventId,
    item_id: z.string(),
    played_ms: z.number().nonnegative(),
  }),
  z.object({ type: z.literal('venus.work.cancel'), event_id: eventId, work_id: z.string() }),
]);

export type ClientEvent = z.infer<typeof ClientEventSchema>;
export type ClientEventType = ClientEvent['type'];
export const CLIENT_EVENT_TYPES: readonly ClientEventType[] = ClientEventSchema.options.map((o) => o.shape.type.value);

/** Client events we know of but do not support: answered with `unsupported_feature`, never silence. */
export const UNSUPPORTED_CLIENT_EVENT_TYPES = ['transcription_session.update'] as const;

/** Server -> client event: OpenAI-Realtime-shaped (GA names, beta aliases where cheap) plus `venus.*`. */
export interface ServerEvent {
  type: string;
  event_id: string;
  [key: string]: unknown;
}
