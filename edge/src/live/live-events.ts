import { CLIENT_FUNCTION_LIMITS } from '@venus/protocol';
import { z } from 'zod';

/**
 * GPT-Live client events (the `openai` package's `resources/live`), the ones this server runs.
 * Unknown fields are tolerated as in the realtime dialect; known GPT-Live events the runtime has no
 * counterpart for are answered `unsupported_feature` (LIVE_UNSUPPORTED), never dropped.
 */
const eventId = z.string().max(256).nullable().optional();
const content = z.string().min(1).max(CLIENT_FUNCTION_LIMITS.maxOutputChars);
const delegationId = z.string().min(1).max(160);

const AudioFormat = z.object({ type: z.enum(['audio/pcm', 'audio/pcmu', 'audio/pcma']), rate: z.number() }).loose();

export const LiveSessionConfigSchema = z
  .object({
    model: z.string().max(128),
    instructions: z.string().max(20_000).nullable().optional(),
    audio: z
      .object({
        format: AudioFormat.optional(),
        output: z
          .object({ voice: z.string().max(64).optional() })
          .loose()
          .optional(),
      })
      .loose()
      .optional(),
    delegation: z
      .object({ type: z.enum(['client', 'responses', 'decisions']), acknowledgement_delay_ms: z.number().optional() })
      .loose()
      .nullable()
      .optional(),
    /** Initial items: developer text joins the instructions, user text is the first user turns. */
    input: z
      .array(
        z
          .object({
            role: z.enum(['developer', 'user', 'assistant']),
            content: z.array(z.object({ text: z.string().max(20_000) }).loose()).min(1),
          })
          .loose(),
      )
      .max(64)
      .optional(),
    triggers: z.array(z.unknown()).max(0, 'decision triggers are not supported').optional(),
    client: z.unknown().optional(),
    store: z.boolean().optional(),
  })
  .loose();
export type LiveSessionConfig = z.infer<typeof LiveSessionConfigSchema>;

export const LiveClientEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('session.start'), event_id: eventId, session: LiveSessionConfigSchema }),
  z.object({ type: z.literal('session.input_audio.append'), event_id: eventId, audio: z.string() }),
  z.object({
    type: z.literal('session.instructions.append'),
    event_id: eventId,
    content: z.string().min(1).max(20_000),
    delegation_id: delegationId.nullable(),
  }),
  z.object({
    type: z.literal('session.commentary.append'),
    event_id: eventId,
    content,
    delegation_id: delegationId.nullable(),
  }),
  z.object({
    type: z.literal('response.item.create'),
    event_id: eventId,
    item: z.object({ type: z.literal('function_call_output'), call_id: delegationId, output: content }).loose(),
  }),
  z.object({ type: z.literal('session.close'), event_id: eventId }),
]);
export type LiveClientEvent = z.infer<typeof LiveClientEventSchema>;

/** GPT-Live client events with no counterpart here (yet): refused with `unsupported_feature`. */
export const LIVE_UNSUPPORTED: Readonly<Record<string, string>> = {
  'session.update': 'session settings are fixed by session.start here',
  'session.input_audio.mute': 'muting the model input is not supported: stop sending audio instead',
  'session.input_audio.unmute': 'muting the model input is not supported: stop sending audio instead',
  'session.output_audio.fixture.play': 'audio fixtures are not supported',
  'session.thinking.append': 'silent context is not supported: use session.commentary.append',
  'decision.create': 'Decisions delegation is not supported: use client delegation',
  'decision.item.create': 'Decisions delegation is not supported: use client delegation',
  'decision.item.delete': 'Decisions delegation is not supported: use client delegation',
  'response.create': 'Responses delegation is not supported: use client delegation',
};
