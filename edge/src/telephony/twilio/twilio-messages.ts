import { z } from 'zod';

/**
 * The Media Streams protocol of a bidirectional `<Connect><Stream>`, as Twilio speaks it: JSON text
 * messages. Fields the edge does not use are let through (Twilio adds some over time); the ones it
 * uses are checked here, once.
 */
const streamSid = z.string().min(1).max(64);
/** A 20 ms μ-law frame is 160 bytes, 216 base64 characters; 64 KiB leaves room for larger chunks, and no more. */
const MAX_PAYLOAD_CHARS = 65_536;

export const TwilioInboundSchema = z.discriminatedUnion('event', [
  z.object({ event: z.literal('connected'), protocol: z.string().optional(), version: z.string().optional() }),
  z.object({
    event: z.literal('start'),
    sequenceNumber: z.string().optional(),
    streamSid,
    start: z.object({
      streamSid: streamSid.optional(),
      accountSid: z.string().max(64).optional(),
      callSid: z.string().max(64).optional(),
      tracks: z.array(z.string()).max(4).optional(),
      customParameters: z.record(z.string().max(64), z.string().max(8192)).default({}),
      mediaFormat: z.object({ encoding: z.string(), sampleRate: z.number(), channels: z.number() }).optional(),
    }),
  }),
  z.object({
    event: z.literal('media'),
    streamSid,
    sequenceNumber: z.string().optional(),
    media: z.object({
      track: z.string().optional(),
      chunk: z.string().optional(),
      timestamp: z.string().optional(),
      payload: z
        .string()
        .max(MAX_PAYLOAD_CHARS)
        .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'payload is not base64'),
    }),
  }),
  z.object({
    event: z.literal('dtmf'),
    streamSid,
    dtmf: z.object({ track: z.string().optional(), digit: z.string() }),
  }),
  z.object({ event: z.literal('mark'), streamSid, mark: z.object({ name: z.string().max(64) }) }),
  z.object({ event: z.literal('stop'), streamSid, stop: z.object({ callSid: z.string().optional() }).optional() }),
]);
export type TwilioInbound = z.infer<typeof TwilioInboundSchema>;

export type TwilioParse = { ok: true; message: TwilioInbound } | { ok: false; message: string };

/** One text message from Twilio, validated; the reason names what was wrong. */
export function parseTwilioMessage(text: string): TwilioParse {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, message: 'not JSON' };
  }
  const parsed = TwilioInboundSchema.safeParse(json);
  if (parsed.success) return { ok: true, message: parsed.data };
  const issue = parsed.error.issues[0];
  return { ok: false, message: `${issue?.path.join('.') || 'event'}: ${issue?.message ?? 'invalid'}` };
}

export function mediaMessage(streamSid: string, payloadBase64: string): string {
  return JSON.stringify({ event: 'media', streamSid, media: { payload: payloadBase64 } });
}

export function markMessage(streamSid: string, name: string): string {
  return JSON.stringify({ event: 'mark', streamSid, mark: { name } });
}

export function clearMessage(streamSid: string): string {
  return JSON.stringify({ event: 'clear', streamSid });
}
