import { z } from 'zod';
import { CLIENT_FUNCTION_LIMITS } from './client-functions.ts';
import { BackendResultSchema, DeliveryPolicySchema, WorkIdSchema } from './delegation.ts';
import { ERROR_CODES } from './errors.ts';
import { MediaRefSchema } from './media-store.ts';
import { SessionConfigSchema } from './session-config.ts';
import { WorkStateSchema } from './work-state.ts';

/**
 * The shared causal timeline: one append-only log per session. Every event carries the session,
 * a strictly increasing `seq`, the `chunk` it belongs to, the session clock `atMs`, and a `stream`.
 * The session host is the only writer of its sessions' timelines; stores check that seqs are contiguous.
 */
export const STREAMS = ['user', 'assistant', 'background', 'system'] as const;
export const StreamSchema = z.enum(STREAMS);
export type Stream = z.infer<typeof StreamSchema>;

/** Video frames still travel inline; audio is referenced (MediaRef) and its samples live in the media store. */
const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'base64');

const Header = {
  session: z.string().min(1),
  seq: z.number().int().positive(),
  chunk: z.number().int().nonnegative(),
  atMs: z.number().nonnegative(),
};

const user = <T extends string, S extends z.ZodRawShape>(type: T, data: S) =>
  z.object({ ...Header, stream: z.literal('user'), type: z.literal(type), data: z.object(data) });
const assistant = <T extends string, S extends z.ZodRawShape>(type: T, data: S) =>
  z.object({ ...Header, stream: z.literal('assistant'), type: z.literal(type), data: z.object(data) });
const background = <T extends string, S extends z.ZodRawShape>(type: T, data: S) =>
  z.object({ ...Header, stream: z.literal('background'), type: z.literal(type), data: z.object(data) });
const system = <T extends string, S extends z.ZodRawShape>(type: T, data: S) =>
  z.object({ ...Header, stream: z.literal('system'), type: z.literal(type), data: z.object(data) });

export const InterruptionActionSchema = z.enum(['continue', 'discard', 'repair', 'park']);
export type InterruptionAction = z.infer<typeof InterruptionActionSchema>;
export const OverlapCauseSchema = z.enum(['backchannel', 'other_directed', 'background', 'interruption']);
export type OverlapCause = z.infer<typeof OverlapCauseSchema>;

/** One recognised user utterance, as a model port reports it and the timeline records it. */
export const UserTranscriptSchema = z.object({
  /** The recogniser's words; '' when it recognised nothing. */
  text: z.string().max(2000),
  /** How well the words explain the audio, 0..1 (the recogniser's second signal). */
  confidence: z.number().min(0).max(1),
  /** False: the words were probably not said (out of grammar); the model did not act on them. */
  inGrammar: z.boolean(),
  /**
   * The speech was a turn (not a backchannel or background speech the assistant talked through),
   * whether or not its words were understood: clients get it as the transcript of the user's item.
   */
  addressed: z.boolean(),
  /** The `user.audio` inputs (by inputSeq) that carry the utterance, and its length. */
  audio: z.object({
    fromInputSeq: z.number().int().nonnegative(),
    toInputSeq: z.number().int().nonnegative(),
    durationMs: z.number().nonnegative(),
  }),
});
export type UserTranscript = z.infer<typeof UserTranscriptSchema>;

/**
 * Who a context entry speaks for: the user, the assistant, the client's system instructions, or a
 * `<backend>` result (a delegation's, or a function call the client restored with its output).
 */
export const ContextRoleSchema = z.enum(['user', 'assistant', 'system', 'backend']);
export type ContextRole = z.infer<typeof ContextRoleSchema>;

export const TimelineEventSchema = z.discriminatedUnion('type', [
  // user media and perception
  /** Microphone audio as the worker received it (16 kHz); the samples are in the media store. */
  user('user.audio', {
    inputSeq: z.number().int().nonnegative(),
    audio: MediaRefSchema,
    durationMs: z.number().nonnegative(),
  }),
  user('user.video', { inputSeq: z.number().int().nonnegative(), mimeType: z.string(), data: base64 }),
  user('user.text', { inputSeq: z.number().int().nonnegative(), itemId: z.string(), text: z.string() }),
  user('user.dtmf', { inputSeq: z.number().int().nonnegative(), digit: z.string().max(1) }),
  user('user.speech', { state: z.enum(['started', 'stopped']), probability: z.number().min(0).max(1) }),
  /**
   * What the model heard the user say in one stretch of speech (its own recogniser): the words, how
   * sure it is, and the utterance's audio as the range of `user.audio` inputs that carry it.
   */
  user('user.transcript', UserTranscriptSchema.shape),
  // assistant output and control
  assistant('assistant.control', { decision: z.enum(['listen', 'speak', 'turn_eos']) }),
  assistant('assistant.utterance', {
    utteranceId: z.string(),
    phase: z.enum(['started', 'finished']),
    reason: z.enum(['completed', 'discarded', 'repaired', 'parked']).optional(),
    /** Set when this utterance regenerates the unspoken continuation of another (repair) or resumes a parked plan. */
    continues: z.string().optional(),
  }),
  assistant('assistant.text', { utteranceId: z.string(), delta: z.string() }),
  assistant('assistant.audio', {
    utteranceId: z.string(),
    audioChunkSeq: z.number().int().nonnegative(),
    /** The samples (24 kHz) are in the media store; the edge gets them in the `assistant_audio` relay frame. */
    audio: MediaRefSchema,
    /** Offset of this chunk within its utterance's audio. */
    startMs: z.number().nonnegative(),
    durationMs: z.number().nonnegative(),
  }),
  /** Private: the hidden request. Never displayed as assistant text, never spoken. */
  assistant('assistant.delegate', {
    workId: WorkIdSchema,
    query: z.string(),
    evidenceCutoffSeq: z.number().int().nonnegative(),
    policy: DeliveryPolicySchema.optional(),
    private: z.literal(true),
  }),
  assistant('assistant.interruption', {
    action: InterruptionActionSchema,
    cause: OverlapCauseSchema,
    utteranceId: z.string().nullable(),
    /** How much of the interrupted utterance the user heard, and its text. */
    heardMs: z.number().nonnegative(),
    heardText: z.string(),
    /** Work of the interrupted turn that this action cancels (repair and explicit cancels). */
    cancelledWork: z.array(WorkIdSchema),
    planId: z.string().optional(),
  }),
  assistant('assistant.parked', { planId: z.string(), utteranceId: z.string(), remainder: z.string() }),
  assistant('assistant.resume_offer', { planId: z.string() }),
  assistant('assistant.resumed', { planId: z.string() }),
  // background work
  background('work.state', {
    workId: WorkIdSchema,
    state: WorkStateSchema,
    reason: z.string().optional(),
    functionName: z.string().optional(),
  }),
  background('work.progress', { workId: WorkIdSchema, message: z.string(), elapsedMs: z.number() }),
  background('work.result', { result: BackendResultSchema }),
  /** The work's function is the client's: the client is asked to call it (an OpenAI `function_call` item). */
  background('work.client_call', {
    workId: WorkIdSchema,
    callId: z.string().min(1).max(160),
    name: z.string().min(1).max(64),
    arguments: z.string().max(CLIENT_FUNCTION_LIMITS.maxArgumentsChars),
  }),
  /** The boundary at which a landed result entered the model's input. */
  background('work.admitted', {
    workId: WorkIdSchema,
    resultSeq: z.number().int().positive(),
    mode: z.enum(['speak', 'silent']),
  }),
  // system
  system('session.config', { config: SessionConfigSchema, tenant: z.string() }),
  /**
   * A conversation item the client restored (`conversation.item.create` of history: an assistant or
   * system message, a user item marked completed, a function call with its output): in the model's
   * context from this input on, not answered. Failover replay puts it back into the rebuilt context.
   */
  system('conversation.restored', {
    inputSeq: z.number().int().nonnegative(),
    itemId: z.string(),
    role: ContextRoleSchema,
    text: z.string().max(20_000),
  }),
  /**
   * One-shot instructions for the model's next response (`response.create`'s `instructions`);
   * `applied: false` when the model port cannot take them (the client gets a notice).
   */
  system('response.instructions', { instructions: z.string().max(20_000), applied: z.boolean() }),
  system('session.incarnation', { incarnation: z.number().int().nonnegative(), reason: z.string() }),
  system('playback.ack', {
    utteranceId: z.string(),
    playedMs: z.number().nonnegative(),
    source: z.enum(['client', 'estimate', 'truncate']),
  }),
  system('session.error', {
    code: z.enum(ERROR_CODES),
    message: z.string(),
    eventId: z.string().optional(),
    eventType: z.string().optional(),
  }),
  system('deadline.missed', { lateMs: z.number().nonnegative() }),
  system('session.closed', { reason: z.string() }),
]);

export type TimelineEvent = z.infer<typeof TimelineEventSchema>;
export type TimelineEventType = TimelineEvent['type'];
export type TimelineEventOf<T extends TimelineEventType> = Extract<TimelineEvent, { type: T }>;

/** An event before the host stamps it: the host fills session, seq, chunk and atMs. */
export type TimelineDraft = {
  [K in TimelineEventType]: Pick<TimelineEventOf<K>, 'stream' | 'type' | 'data'>;
}[TimelineEventType];

/** Private events never reach transcripts, displayed text or speech. */
export function isPrivate(event: Pick<TimelineEvent, 'type'>): boolean {
  return event.type === 'assistant.delegate';
}
