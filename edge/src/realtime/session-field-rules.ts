import { betaModalities, gaModalities, sameList } from './output-modalities.ts';
import type { FieldRule } from './session-fields.ts';

/**
 * `session.update` fields the session applies as sent: `session.updated` shows each back with the
 * value the client gave (formats, voice, instructions, tools, the VAD type, the `venus` extension).
 */
export const APPLIED_SESSION_FIELDS: ReadonlySet<string> = new Set([
  'type',
  'instructions',
  'voice',
  'audio.output.voice',
  'input_audio_format',
  'output_audio_format',
  'audio.input.format',
  'audio.output.format',
  'tools',
  'venus',
  'turn_detection.type',
  'audio.input.turn_detection.type',
]);

const VAD_TUNING = 'the runtime ends a turn after 500 ms of silence by its own voice activity detection';

/** The VAD fields of one turn detection object (GA `audio.input.turn_detection`, beta `turn_detection`). */
function turnDetectionRules(at: string): FieldRule[] {
  return [
    {
      path: `${at}.create_response`,
      applied: (v) => v === true,
      kind: 'not_applied',
      how: 'the model decides by itself when to answer',
    },
    {
      path: `${at}.interrupt_response`,
      applied: (v) => v === true,
      kind: 'not_applied',
      how: 'the runtime decides whether speech over the assistant interrupts it',
    },
    {
      path: `${at}.eagerness`,
      kind: 'approximate',
      how: 'every eagerness takes turns alike: 500 ms of silence, then the model judges whether to answer',
    },
    { path: `${at}.threshold`, kind: 'approximate', how: VAD_TUNING },
    { path: `${at}.silence_duration_ms`, kind: 'approximate', how: VAD_TUNING },
    { path: `${at}.prefix_padding_ms`, kind: 'approximate', how: 'the model hears all of the speech' },
    {
      path: `${at}.idle_timeout_ms`,
      applied: (v) => v === null,
      kind: 'not_applied',
      how: 'the model decides by itself when to speak after a silence',
    },
    // `null` (push to talk) is applied; every other value's fields are covered above.
    { path: at, applied: (v) => v === null, kind: 'not_applied', how: 'not a turn detection field' },
  ];
}

const NO_NOISE_REDUCTION = 'no noise reduction: the model hears the audio as sent';

/** A setting whose `null` (off) is what the runtime does anyway; any other value is not applied. */
function nullOnly(path: string, how: string): FieldRule {
  return { path, applied: (v) => v === null, kind: 'not_applied', how };
}

const UNLIMITED = 'replies are as long as the model makes them';

/** Sampling settings, of a session and of one response alike. */
export const SAMPLING_RULES: readonly FieldRule[] = [
  { path: 'temperature', kind: 'not_applied', how: 'the model port samples as it is configured' },
  { path: 'max_output_tokens', applied: (v) => v === 'inf', kind: 'not_applied', how: UNLIMITED },
  { path: 'max_response_output_tokens', applied: (v) => v === 'inf', kind: 'not_applied', how: UNLIMITED },
];

const TRANSCRIPTION =
  "user transcripts come from the model port's own recogniser where it has one; model, language and prompt are not used";

/** What becomes of every other `session.update` field; the first rule covering a field decides. */
export const SESSION_FIELD_RULES: readonly FieldRule[] = [
  ...turnDetectionRules('audio.input.turn_detection'),
  ...turnDetectionRules('turn_detection'),
  {
    path: 'output_modalities',
    applied: (v) => sameList(v, gaModalities('audio')) || sameList(v, gaModalities('text')),
    kind: 'approximate',
    how: 'audio with its transcript',
  },
  {
    path: 'modalities',
    applied: (v) => sameList(v, betaModalities('audio')) || sameList(v, betaModalities('text')),
    kind: 'approximate',
    how: 'audio with its transcript when audio is among them, else text',
  },
  { path: 'model', kind: 'not_applied', how: "the runtime's own model answers (session.model is venus)" },
  ...SAMPLING_RULES,
  {
    path: 'tool_choice',
    applied: (v) => v === 'auto',
    kind: 'approximate',
    how: 'the planner chooses among the functions for each delegated request (auto)',
  },
  {
    path: 'parallel_tool_calls',
    kind: 'approximate',
    how: 'each delegation is its own work; several may run at once',
  },
  { path: 'audio.input.transcription', kind: 'approximate', how: TRANSCRIPTION },
  { path: 'input_audio_transcription', kind: 'approximate', how: TRANSCRIPTION },
  nullOnly('audio.input.noise_reduction', NO_NOISE_REDUCTION),
  nullOnly('input_audio_noise_reduction', NO_NOISE_REDUCTION),
  { path: 'audio.output.speed', applied: (v) => v === 1, kind: 'not_applied', how: 'the voice speaks at its own rate' },
  { path: 'speed', applied: (v) => v === 1, kind: 'not_applied', how: 'the voice speaks at its own rate' },
  {
    path: 'include',
    applied: (v) => Array.isArray(v) && v.length === 0,
    kind: 'not_applied',
    how: 'no log probabilities are produced',
  },
  nullOnly('prompt', 'stored prompts are not served: send instructions'),
  nullOnly('tracing', 'no OpenAI traces: the session timeline (venus.timeline) is its record'),
  {
    path: 'truncation',
    kind: 'approximate',
    how: "the runtime keeps the model's context (cut to what was heard when the user interrupts)",
  },
  { path: 'reasoning', kind: 'not_applied', how: 'the model port reasons as it is configured' },
  {
    path: 'client_secret',
    kind: 'not_applied',
    how: 'client secrets are minted with POST /v1/realtime/client_secrets',
  },
];
