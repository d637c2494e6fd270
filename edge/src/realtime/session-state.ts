import { isDeepStrictEqual } from 'node:util';
import { type ClientEvent, type SessionConfig, SessionConfigSchema } from '@venus/protocol';
import {
  type CanonicalAudioFormat,
  type DeclaredAudioFormat,
  gaFormat,
  resolveDeclaredFormat,
} from '../audio/audio-format.ts';
import { parseTools, presentTools } from './client-tools.ts';
import { betaModalities, gaModalities, type OutputModality, parseModalities } from './output-modalities.ts';
import type { ProtocolError } from './protocol-error.ts';
import { APPLIED_SESSION_FIELDS, SESSION_FIELD_RULES } from './session-field-rules.ts';
import { fieldNotices, noteFields } from './session-fields.ts';
import {
  DEFAULT_TURN_DETECTION,
  parseTurnDetection,
  presentTurnDetection,
  type TurnDetection,
} from './turn-detection.ts';

/** What one realtime connection has agreed with its client: the worker's config plus edge-only settings. */
export interface RealtimeSessionState {
  id: string;
  config: SessionConfig;
  inputFormat: CanonicalAudioFormat;
  outputFormat: CanonicalAudioFormat;
  /** The client sends `venus.playback.ack`, so the edge's own estimates are not sent to the worker. */
  playbackAcks: boolean;
  /** `venus.timeline` carries the per-chunk audio records too (`session.venus.timeline_audio`). */
  timelineAudio: boolean;
  /** What responses are made of: spoken audio with transcripts, or text only. */
  outputModality: OutputModality;
  /** The runtime's own turn taking, or `null`: push to talk (audio held until committed). */
  turnDetection: TurnDetection;
}

/** A new connection's session before any `session.update`. */
export function initialSessionState(id: string, config: SessionConfig): RealtimeSessionState {
  return {
    id,
    config,
    inputFormat: 'pcm16',
    outputFormat: 'pcm16',
    playbackAcks: false,
    timelineAudio: false,
    outputModality: 'audio',
    turnDetection: DEFAULT_TURN_DETECTION,
  };
}

type SessionUpdate = Extract<ClientEvent, { type: 'session.update' }>['session'];

export interface SessionNotice {
  code: string;
  message: string;
  /** The fields the notice is about, each with how it was taken (`field_approximate`, `field_not_applied`). */
  fields?: { param: string; how: string }[];
}

export type SessionUpdateResult =
  | { ok: true; state: RealtimeSessionState; notices: SessionNotice[] }
  | { ok: false; error: ProtocolError };

/**
 * Applies a validated `session.update` all or nothing: a bad field leaves the session as it was.
 * No field is dropped silently: each is applied (and shown back in `session.updated`), or named in
 * a `field_approximate` / `field_not_applied` notice saying how it was taken (session-field-rules.ts),
 * or refused with a coded error naming it. Stock clients that always send settings the runtime has
 * no use for keep working. Function tools become the session's client functions (client-tools.ts).
 *
 * @example
 *   const result = applySessionUpdate(state, { voice: 'en-gb', venus: { chunk_ms: 160 } });
 *   if (result.ok) state = result.state;
 */
export function applySessionUpdate(state: RealtimeSessionState, update: SessionUpdate): SessionUpdateResult {
  const input = pickFormat(
    update.audio?.input?.format,
    'session.audio.input.format',
    update.input_audio_format,
    'session.input_audio_format',
  );
  if (!input.ok) return input;
  const output = pickFormat(
    update.audio?.output?.format,
    'session.audio.output.format',
    update.output_audio_format,
    'session.output_audio_format',
  );
  if (!output.ok) return output;

  const tools = update.tools === undefined ? undefined : parseTools(update.tools);
  if (tools !== undefined && !tools.ok) return tools;
  const modality = pickModality(update);
  if (!modality.ok) return modality;
  const turns = pickTurnDetection(update);
  if (!turns.ok) return turns;
  const voice = update.audio?.output?.voice ?? update.voice;
  const parsed = SessionConfigSchema.safeParse({
    ...state.config,
    ...(voice === undefined ? {} : { voice }),
    ...(update.instructions === undefined ? {} : { instructions: update.instructions }),
    ...(update.venus?.chunk_ms === undefined ? {} : { chunkMs: update.venus.chunk_ms }),
    ...(update.venus?.delivery_policy === undefined ? {} : { deliveryPolicy: update.venus.delivery_policy }),
    ...(tools === undefined ? {} : { tools: tools.tools }),
    ...(update.venus?.delegation === undefined ? {} : { delegation: update.venus.delegation }),
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = String(issue?.path[0] ?? '');
    return {
      ok: false,
      error: {
        code: 'invalid_event',
        message: `session.update: ${field}: ${issue?.message}`,
        param: PARAM_OF[field] ?? 'session',
      },
    };
  }

  const notes = noteFields(update as Record<string, unknown>, 'session', APPLIED_SESSION_FIELDS, SESSION_FIELD_RULES);
  if (tools !== undefined && !isDeepStrictEqual(presentTools(tools.tools), update.tools)) {
    notes.push({
      param: 'session.tools',
      kind: 'approximate',
      how: "function tools are the session's functions: schema keywords outside the planner's subset, strict and other tool fields are left out",
    });
  }
  const notices: SessionNotice[] = fieldNotices(notes, 'session.update');
  if (tools !== undefined) notices.push(...tools.notices);
  return {
    ok: true,
    notices,
    state: {
      ...state,
      config: parsed.data,
      inputFormat: input.format ?? state.inputFormat,
      outputFormat: output.format ?? state.outputFormat,
      playbackAcks: update.venus?.playback_acks ?? state.playbackAcks,
      timelineAudio: update.venus?.timeline_audio ?? state.timelineAudio,
      outputModality: modality.value ?? state.outputModality,
      turnDetection: turns.value === undefined ? state.turnDetection : turns.value,
    },
  };
}

const PARAM_OF: Record<string, string> = {
  voice: 'session.voice',
  instructions: 'session.instructions',
  chunkMs: 'session.venus.chunk_ms',
  deliveryPolicy: 'session.venus.delivery_policy',
};

type PickedValue<T> = { ok: true; value: T | undefined } | { ok: false; error: ProtocolError };

/** GA `output_modalities` wins over beta `modalities`. */
function pickModality(update: SessionUpdate): PickedValue<OutputModality> {
  if (update.output_modalities !== undefined)
    return parseModalities(update.output_modalities, 'session.output_modalities');
  if (update.modalities !== undefined) return parseModalities(update.modalities, 'session.modalities');
  return { ok: true, value: undefined };
}

/** GA `audio.input.turn_detection` wins over beta `turn_detection`; `null` (push to talk) is a value. */
function pickTurnDetection(update: SessionUpdate): PickedValue<TurnDetection> {
  const input = update.audio?.input as { turn_detection?: unknown } | undefined;
  if (input !== undefined && 'turn_detection' in input && input.turn_detection !== undefined)
    return parseTurnDetection(input.turn_detection, 'session.audio.input.turn_detection');
  if ('turn_detection' in update && update.turn_detection !== undefined)
    return parseTurnDetection(update.turn_detection, 'session.turn_detection');
  return { ok: true, value: undefined };
}

type Picked = { ok: true; format: CanonicalAudioFormat | undefined } | { ok: false; error: ProtocolError };

/** GA (`audio.*.format`) wins over beta (`*_audio_format`) when a client sends both. */
function pickFormat(
  ga: DeclaredAudioFormat | undefined,
  gaParam: string,
  beta: DeclaredAudioFormat | undefined,
  betaParam: string,
): Picked {
  const declared = ga ?? beta;
  if (declared === undefined) return { ok: true, format: undefined };
  const resolved = resolveDeclaredFormat(declared);
  if (resolved.ok) return { ok: true, format: resolved.format };
  // Only a declared rate can be wrong: the names themselves were checked by the schema.
  const param = `${ga === undefined ? betaParam : gaParam}.rate`;
  return { ok: false, error: { code: 'audio_wrong_format', message: resolved.message, param } };
}

/** The session as `session.created`/`session.updated` describe it, in both GA and beta field names. */
export function sessionObject(state: RealtimeSessionState): Record<string, unknown> {
  const turnDetection = presentTurnDetection(state.turnDetection);
  return {
    id: state.id,
    object: 'realtime.session',
    type: 'realtime',
    model: 'venus',
    instructions: state.config.instructions ?? '',
    voice: state.config.voice,
    output_modalities: gaModalities(state.outputModality),
    modalities: betaModalities(state.outputModality),
    input_audio_format: state.inputFormat,
    output_audio_format: state.outputFormat,
    turn_detection: turnDetection,
    audio: {
      input: { format: gaFormat(state.inputFormat), turn_detection: turnDetection, noise_reduction: null },
      output: { format: gaFormat(state.outputFormat), voice: state.config.voice, speed: 1 },
    },
    tools: presentTools(state.config.tools),
    tool_choice: 'auto',
    speed: 1,
    input_audio_noise_reduction: null,
    max_output_tokens: 'inf',
    max_response_output_tokens: 'inf',
    include: [],
    tracing: null,
    prompt: null,
    venus: {
      chunk_ms: state.config.chunkMs,
      delivery_policy: state.config.deliveryPolicy,
      playback_acks: state.playbackAcks,
      timeline_audio: state.timelineAudio,
    },
  };
}
