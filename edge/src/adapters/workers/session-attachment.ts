import { SessionUpdateSchema } from '@venus/protocol';
import { z } from 'zod';

/** Headers the Worker sets when it hands an upgrade to a session's Durable Object. */
export const SESSION_HEADER = 'x-venus-session';
export const ADMISSION_HEADER = 'x-venus-admission';

const SettingsSchema = SessionUpdateSchema.shape.session;

/** Who the session acts for, as the Worker's auth middleware decided. */
const PrincipalSchema = z
  .object({
    tenant: z.string().min(1),
    scopes: z.array(z.string()),
    keyId: z.string(),
    kind: z.enum(['api_key', 'client_token', 'open']),
    operator: z.boolean(),
    session: SettingsSchema.optional(),
  })
  .loose();

/**
 * What a RealtimeSession keeps in its client socket's attachment, so that after the object is
 * evicted the next event rebuilds the same session: ids, the principal, and the settings the
 * client last agreed (formats, voice, chunk size), as `session.updated` told it. Attachments hold
 * at most 2 KiB, so instructions (up to 20,000 characters) live in the object's storage instead.
 */
export const SessionAttachmentSchema = z.object({
  sessionId: z.string().min(1),
  principal: PrincipalSchema,
  settings: SettingsSchema.optional(),
});

export type SessionAttachment = z.infer<typeof SessionAttachmentSchema>;
export type SessionSettings = z.infer<typeof SettingsSchema>;

/** The parts of a `session.created`/`session.updated` session object a restore needs (but instructions). */
export function settingsFromSessionObject(session: Record<string, unknown>): SessionSettings | undefined {
  const venus = (session.venus ?? {}) as Record<string, unknown>;
  const parsed = SettingsSchema.safeParse({
    input_audio_format: session.input_audio_format,
    output_audio_format: session.output_audio_format,
    voice: session.voice,
    venus: {
      chunk_ms: venus.chunk_ms,
      delivery_policy: venus.delivery_policy,
      playback_acks: venus.playback_acks,
      timeline_audio: venus.timeline_audio,
    },
  });
  return parsed.success ? parsed.data : undefined;
}
