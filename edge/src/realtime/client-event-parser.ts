import {
  CLIENT_EVENT_TYPES,
  type ClientEvent,
  ClientEventSchema,
  UNSUPPORTED_CLIENT_EVENT_TYPES,
} from '@venus/protocol';
import type { ProtocolError } from './protocol-error.ts';

export type ParsedClientEvent =
  | { ok: true; event: ClientEvent }
  | { ok: false; error: ProtocolError; clientEventId: string | null };

const KNOWN = new Set<string>(CLIENT_EVENT_TYPES);
const UNSUPPORTED = new Set<string>(UNSUPPORTED_CLIENT_EVENT_TYPES);

/**
 * Validates one client WebSocket text message at the boundary. The checks run from the cheapest,
 * most basic failure to the most specific, and each names what was wrong so a client developer can
 * fix it from the error alone.
 *
 * @example
 *   const parsed = parseClientEvent('{"type":"input_audio_buffer.commit"}', 'sess_1');
 *   if (!parsed.ok) send(errorEvent(parsed.error, parsed.clientEventId));
 */
export function parseClientEvent(text: string, sessionId: string): ParsedClientEvent {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return fail({ code: 'invalid_json', message: `message is not valid JSON: ${detail}` }, null);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return fail({ code: 'invalid_event', message: 'a client event must be a JSON object' }, null);
  }
  const object = value as Record<string, unknown>;
  const clientEventId = typeof object.event_id === 'string' ? object.event_id : null;
  if ('session_id' in object && object.session_id !== sessionId) {
    return fail(
      {
        code: 'wrong_session',
        message: `event names session ${JSON.stringify(object.session_id)}, but this connection is session ${sessionId}`,
        param: 'session_id',
      },
      clientEventId,
    );
  }
  const type = object.type;
  if (typeof type !== 'string') {
    return fail({ code: 'invalid_event', message: 'missing string field "type"', param: 'type' }, clientEventId);
  }
  if (UNSUPPORTED.has(type)) {
    return fail({ code: 'unsupported_feature', message: `${type} is not supported by this server` }, clientEventId);
  }
  if (!KNOWN.has(type)) {
    return fail({ code: 'unknown_event_type', message: `unknown event type ${JSON.stringify(type)}` }, clientEventId);
  }
  const parsed = ClientEventSchema.safeParse(object);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.map(String).join('.') ?? '';
    return fail(
      {
        code: 'invalid_event',
        message: `${type}: ${path === '' ? '' : `${path}: `}${issue?.message ?? 'invalid event'}`,
        ...(path === '' ? {} : { param: path }),
      },
      clientEventId,
    );
  }
  return { ok: true, event: parsed.data };
}

const APPEND_PREFIX = '{"type":"input_audio_buffer.append","audio":"';
const APPEND_SUFFIX = '"}';

/**
 * The audio of an append sent in its plain form, `{"type":"input_audio_buffer.append","audio":"…"}`
 * (what streaming clients send 50 times a second), cut out without JSON.parse or the schema. Not
 * yet checked: only once the audio has passed the strict base64 check (which admits no quote,
 * backslash or control character) is it certain that JSON.parse would have read exactly this
 * string and the schema accepted it; until then the message must take parseClientEvent, which
 * gives any error its usual code. Any other form (an `event_id`, other spacing or key order)
 * returns undefined.
 *
 * @example
 *   const audio = plainAppendAudio(text); // then appendedAudioBytes(audio, format)
 */
export function plainAppendAudio(text: string): string | undefined {
  if (text.length < APPEND_PREFIX.length + APPEND_SUFFIX.length) return undefined;
  if (!text.startsWith(APPEND_PREFIX) || !text.endsWith(APPEND_SUFFIX)) return undefined;
  return text.slice(APPEND_PREFIX.length, text.length - APPEND_SUFFIX.length);
}

function fail(error: ProtocolError, clientEventId: string | null): ParsedClientEvent {
  return { ok: false, error, clientEventId };
}
