import { z } from 'zod';
import type { Emit } from './outbound-event.ts';
import { type OutputModality, parseModalities } from './output-modalities.ts';
import type { ProtocolError } from './protocol-error.ts';
import { SAMPLING_RULES } from './session-field-rules.ts';
import { type FieldRule, type FieldsNotice, fieldNotices, noteFields } from './session-fields.ts';

/**
 * `response.create` on a proactive model. The model decides by itself when to speak, so a request
 * does not start a response; what it asks for is kept and given to the next response the model
 * begins after it: its `metadata` (echoed on that response's `response.created` and
 * `response.done`, for clients that correlate by it) and its `output_modalities` (`["text"]`: that
 * response comes as text). Out-of-band responses (`conversation: "none"`) need a model that can
 * answer outside the conversation, which no model port can: refused with `unsupported_feature`
 * naming `response.conversation`. `instructions` go to the worker for the model's next response
 * (response-instructions.ts). Every other field is named in a notice (field_not_applied).
 * Requests not yet taken by a response are bounded: the oldest stop waiting past MAX_PENDING.
 */
const ResponseOptionsSchema = z
  .object({
    conversation: z.union([z.enum(['auto', 'none']), z.string().max(128)]).optional(),
    metadata: z.record(z.string().max(64), z.string().max(512)).nullable().optional(),
    output_modalities: z.unknown().optional(),
    modalities: z.unknown().optional(),
  })
  .loose();

/** What a request gives the response that takes it. */
export interface ResponseRequest {
  metadata?: Record<string, string>;
  modality?: OutputModality;
}

/** Requests waiting for a response: a client asking faster than the model speaks keeps the newest. */
const MAX_PENDING = 16;

/** `instructions` go to the worker for the next response (response-instructions.ts). */
const APPLIED = new Set(['metadata', 'output_modalities', 'modalities', 'conversation', 'instructions']);

const RULES: readonly FieldRule[] = [
  {
    path: 'tools',
    kind: 'not_applied',
    how: 'declare tools with session.update: they are the functions of the whole session',
  },
  { path: 'tool_choice', kind: 'not_applied', how: 'the planner chooses among the functions for each request' },
  { path: 'input', kind: 'not_applied', how: 'responses answer the whole conversation' },
  { path: 'audio', kind: 'not_applied', how: "responses speak in the session's voice and format" },
  { path: 'voice', kind: 'not_applied', how: "responses speak in the session's voice" },
  { path: 'output_audio_format', kind: 'not_applied', how: "responses use the session's output format" },
  ...SAMPLING_RULES,
  { path: 'prompt', kind: 'not_applied', how: 'stored prompts are not served' },
];

export type AcceptedRequest =
  | { ok: true; request: ResponseRequest; notices: FieldsNotice[] }
  | { ok: false; error: ProtocolError };

/** Said on every accepted request: it is kept for the next response, which the model begins when it decides. */
export const PROACTIVE_NOTICE = {
  type: 'venus.notice',
  code: 'proactive_model',
  message:
    'response.create is accepted but starts nothing: the model decides when to speak; the next response it begins carries this request',
} as const;

/**
 * @example
 *   const requests = new ResponseRequests();
 *   requests.create({ metadata: { turn: '7' } }, emit, sendInstructions); // undefined: kept
 *   requests.take(); // { metadata: { turn: '7' } }: the response the model begins next carries it
 */
export class ResponseRequests {
  readonly #pending: ResponseRequest[] = [];

  /**
   * A `response.create`: an error (nothing kept, nothing sent), or its instructions passed on by
   * `sendInstructions`, the request kept and its notices emitted.
   */
  create(
    response: unknown,
    emit: Emit,
    sendInstructions: (response: unknown) => ProtocolError | undefined,
  ): ProtocolError | undefined {
    const accepted = this.request(response);
    if (!accepted.ok) return accepted.error;
    const error = sendInstructions(response);
    if (error !== undefined) return error;
    this.#pending.push(accepted.request);
    if (this.#pending.length > MAX_PENDING) this.#pending.shift();
    emit(PROACTIVE_NOTICE);
    for (const notice of accepted.notices) emit({ type: 'venus.notice', ...notice });
    return undefined;
  }

  /** One `response.create`'s `response` checked (here; the envelope by the event parser) and noted. */
  request(response: unknown): AcceptedRequest {
    const parsed = ResponseOptionsSchema.safeParse(response ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const param = ['response', ...(issue?.path ?? []).map(String)].join('.');
      return { ok: false, error: { code: 'invalid_event', message: `${param}: ${issue?.message}`, param } };
    }
    const options = parsed.data;
    if (options.conversation !== undefined && options.conversation !== 'auto') {
      const message =
        'out-of-band responses (conversation other than "auto") are not supported: the model answers within the conversation';
      return { ok: false, error: { code: 'unsupported_feature', message, param: 'response.conversation' } };
    }
    const request: ResponseRequest = {};
    const modalities = options.output_modalities ?? options.modalities;
    if (modalities !== undefined) {
      const param = options.output_modalities === undefined ? 'response.modalities' : 'response.output_modalities';
      const modality = parseModalities(modalities, param);
      if (!modality.ok) return modality;
      request.modality = modality.value;
    }
    if (options.metadata) request.metadata = options.metadata;
    const notes = noteFields(options, 'response', APPLIED, RULES);
    return { ok: true, request, notices: fieldNotices(notes, 'response.create') };
  }

  /** The oldest request not yet taken, for the response the model is beginning. */
  take(): ResponseRequest | undefined {
    return this.#pending.shift();
  }
}
