import { z } from 'zod';
import { CLIENT_FUNCTION_LIMITS } from './client-functions.ts';
import { ERROR_CODES } from './errors.ts';
import { SessionConfigSchema } from './session-config.ts';
import { ContextRoleSchema, TimelineEventSchema } from './timeline.ts';

/**
 * Frames between the edge (which terminates client transports) and the GPU worker (which hosts the
 * session). In one process they are passed as objects; across machines they travel as msgpack.
 * The edge has already validated and normalised client input: audio arrives as 16 kHz s16le.
 */
const session = z.string().min(1);

export const EdgeToWorkerFrameSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('open'),
    session,
    tenant: z.string().min(1),
    config: SessionConfigSchema,
  }),
  z.object({ kind: z.literal('config'), session, config: SessionConfigSchema }),
  z.object({ kind: z.literal('audio'), session, pcm16k: z.instanceof(Uint8Array) }),
  z.object({ kind: z.literal('text'), session, itemId: z.string(), text: z.string().min(1).max(20_000) }),
  /** A restored conversation item (history): joins the model's context without being answered. */
  z.object({
    kind: z.literal('history'),
    session,
    itemId: z.string().min(1).max(128),
    role: ContextRoleSchema,
    text: z.string().min(1).max(20_000),
  }),
  /** `response.create`'s `instructions`: for the model's next response only. */
  z.object({ kind: z.literal('response_instructions'), session, instructions: z.string().min(1).max(20_000) }),
  z.object({ kind: z.literal('dtmf'), session, digit: z.string().length(1) }),
  z.object({
    kind: z.literal('playback_ack'),
    session,
    utteranceId: z.string(),
    playedMs: z.number().nonnegative(),
    source: z.enum(['client', 'estimate', 'truncate']),
    /** The client event it came from (a client ack or a truncate), named by the worker's refusal. */
    eventId: z.string().optional(),
  }),
  z.object({ kind: z.literal('cancel_response'), session }),
  /** `eventId`: the client event it came from, so the worker's refusal names it (`session.error`). */
  z.object({ kind: z.literal('cancel_work'), session, workId: z.string(), eventId: z.string().optional() }),
  /** A client's `function_call_output` for a client call (`work.client_call`): the work's result. */
  z.object({
    kind: z.literal('function_output'),
    session,
    callId: z.string().min(1).max(160),
    output: z.string().max(CLIENT_FUNCTION_LIMITS.maxOutputChars),
    eventId: z.string().optional(),
  }),
  z.object({ kind: z.literal('close'), session, reason: z.string() }),
]);
export type EdgeToWorkerFrame = z.infer<typeof EdgeToWorkerFrameSchema>;

/**
 * The reason of the `close` an edge answers a `handover` with, and of the `closed` a worker sends
 * once it has let go of the session without ending it (no `session.closed` on its timeline).
 */
export const HANDOVER_REASON = 'handover';

export const WorkerToEdgeFrameSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('timeline'), session, event: TimelineEventSchema }),
  /**
   * The samples of one assistant audio chunk, sent right before its `assistant.audio` timeline
   * event (which carries only a MediaRef): binary 24 kHz s16le, so the edge neither decodes base64
   * nor validates a base64 string per frame. Paired with the event by utterance and chunk seq.
   */
  z.object({
    kind: z.literal('assistant_audio'),
    session,
    utteranceId: z.string(),
    audioChunkSeq: z.number().int().nonnegative(),
    pcm24k: z.instanceof(Uint8Array),
  }),
  z.object({
    kind: z.literal('error'),
    session,
    code: z.enum(ERROR_CODES),
    message: z.string(),
  }),
  z.object({ kind: z.literal('closed'), session, reason: z.string() }),
  /**
   * A planned migration (drain). From a worker: it lets go of the session; the edge holds the
   * session's next frames, answers with `close` whose reason is HANDOVER_REASON, and places the
   * session on another worker once the worker's `closed` with that reason says every event is
   * stored. From a fleet link to its listeners: the session is moving (`worker_lost` on failover).
   */
  z.object({ kind: z.literal('handover'), session, reason: z.enum(['draining', 'worker_lost']) }),
]);
export type WorkerToEdgeFrame = z.infer<typeof WorkerToEdgeFrameSchema>;

/**
 * The edge's handle on a worker: send frames for a session, receive the worker's frames.
 * Implementations: in-process (embedded default) and msgpack over WebSocket (separate processes).
 */
export interface WorkerLink {
  send(frame: EdgeToWorkerFrame): void;
  onFrame(session: string, listener: (frame: WorkerToEdgeFrame) => void): () => void;
  close(): Promise<void>;
}
