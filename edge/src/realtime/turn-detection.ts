import { z } from 'zod';
import type { ProtocolError } from './protocol-error.ts';

/**
 * OpenAI's turn detection settings (`session.audio.input.turn_detection`, beta
 * `session.turn_detection`) as the runtime takes them. `null` is push to talk: the edge holds the
 * client's audio until `input_audio_buffer.commit` (input-audio-buffer.ts). `server_vad` and
 * `semantic_vad` are both served by the runtime's own turn taking: its voice activity detection
 * ends a burst of speech after 500 ms of silence and the model then decides whether and when to
 * answer. `eagerness` (`low`, `medium`, `high`, `auto`) therefore maps onto the same behaviour for
 * every value, and the VAD tuning fields (`threshold`, `silence_duration_ms`, `prefix_padding_ms`,
 * `idle_timeout_ms`) onto the runtime's fixed ones: each is named in a `field_approximate` notice.
 */
const VadSchema = z
  .object({
    type: z.enum(['server_vad', 'semantic_vad']),
    create_response: z.boolean().optional(),
    interrupt_response: z.boolean().optional(),
    eagerness: z.enum(['low', 'medium', 'high', 'auto']).optional(),
    threshold: z.number().min(0).max(1).optional(),
    silence_duration_ms: z.number().int().min(0).max(60_000).optional(),
    prefix_padding_ms: z.number().int().min(0).max(60_000).optional(),
    idle_timeout_ms: z.number().int().min(0).max(3_600_000).nullable().optional(),
  })
  .loose();

export type VadSettings = z.infer<typeof VadSchema>;

/** The session's turn taking: the runtime's own (with the client's VAD type echoed) or push to talk. */
export type TurnDetection = { type: 'server_vad' | 'semantic_vad'; eagerness?: VadSettings['eagerness'] } | null;

export const DEFAULT_TURN_DETECTION: TurnDetection = { type: 'server_vad' };

export type ParsedTurnDetection = { ok: true; value: TurnDetection } | { ok: false; error: ProtocolError };

/** Validates a client's turn detection; `param` names the field it came in (GA or beta). */
export function parseTurnDetection(value: unknown, param: string): ParsedTurnDetection {
  if (value === null) return { ok: true, value: null };
  const parsed = VadSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue?.path.length ? `${param}.${issue.path.join('.')}` : param;
    return { ok: false, error: { code: 'invalid_event', message: `${at}: ${issue?.message}`, param: at } };
  }
  const { type, eagerness } = parsed.data;
  return { ok: true, value: eagerness === undefined ? { type } : { type, eagerness } };
}

/** The turn detection as `session.updated` shows it: answers and interruptions are always on. */
export function presentTurnDetection(turnDetection: TurnDetection): Record<string, unknown> | null {
  if (turnDetection === null) return null;
  return { ...turnDetection, create_response: true, interrupt_response: true };
}
