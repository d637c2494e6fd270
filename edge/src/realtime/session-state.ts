import { type ClientEvent, type SessionConfig, SessionConfigSchema } from '@venus/protocol';
import {
  type CanonicalAudioFormat,
  type DeclaredAudioFormat,
  gaFormat,
  resolveDeclaredFormat,
} from '../audio/audio-format.ts';
import { parseTools, presentTools } from './client-tools.ts';
import type { ProtocolError } from './protocol-error.ts';

/** What one realtime connection has agreed with its client: the worker's config plus edge-only settings. */
export interface RealtimeSessionState {
  id: string;
  config: SessionConfig;
  inputFormat: CanonicalAudioFormat;
  outputFormat: CanonicalAudioFormat;
  /** The client sends `venus.playback.ack`, so the edge's own estimates are not sent to the worker. */
  playbackAcks: boolean;
}

type SessionUpdate = Extract<ClientEvent, { type: 'session.update' }>['session'];

export interface SessionNotice {
  code: string;
  message: string;
}

export type SessionUpdateResult =
  | { ok: true; state: RealtimeSessionState; notices: SessionNotice[] }
  | { ok: false; error: ProtocolError };

/**
 * Applies a validated `session.update` all or nothing: a bad field leaves the session as it was.
 * Fields the runtime decides for itself (turn detection, tool choice) are accepted with a
 * `venus.notice` rather than an error, so stock clients that always send them keep working.
 * Function tools become the session's client functions (client-tools.ts).
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

  const notices: SessionNotice[] = [];
  if ('turn_detection' in update) {
    notices.push({
      code: 'turn_detection_ignored',
      message: 'turn taking is decided by the runtime (full duplex); turn_detection settings are ignored',
    });
  }
  if (tools !== undefined) notices.push(...tools.notices);
  const toolChoice = (update as { tool_choice?: unknown }).tool_choice;
  if (toolChoice !== undefined && toolChoice !== 'auto') {
    notices.push({
      code: 'tool_choice_ignored',
      message: 'the planner chooses among the functions for each delegated request (tool_choice "auto" only)',
    });
  }
  return {
    ok: true,
    notices,
    state: {
      ...state,
      config: parsed.data,
      inputFormat: input.format ?? state.inputFormat,
      outputFormat: output.format ?? state.outputFormat,
      playbackAcks: update.venus?.playback_acks ?? state.playbackAcks,
    },
  };
}

const PARAM_OF: Record<string, string> = {
  voice: 'session.voice',
  instructions: 'session.instructions',
  chunkMs: 'session.venus.chunk_ms',
  deliveryPolicy: 'session.venus.delivery_policy',
};

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
  const turnDetection = { type: 'server_vad', create_response: true, interrupt_response: true };
  return {
    id: state.id,
    object: 'realtime.session',
    type: 'realtime',
    model: 'venus',
    instructions: state.config.instructions ?? '',
    voice: state.config.voice,
    output_modalities: ['audio'],
    modalities: ['audio', 'text'],
    input_audio_format: state.inputFormat,
    output_audio_format: state.outputFormat,
    turn_detection: turnDetection,
    audio: {
      input: { format: gaFormat(state.inputFormat), turn_detection: turnDetection },
      output: { format: gaFormat(state.outputFormat), voice: state.config.voice },
    },
    tools: presentTools(state.config.tools),
    tool_choice: 'auto',
    venus: {
      chunk_ms: state.config.chunkMs,
      delivery_policy: state.config.deliveryPolicy,
      playback_acks: state.playbackAcks,
    },
  };
}
