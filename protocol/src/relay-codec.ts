import { Packr } from 'msgpackr';
import type { z } from 'zod';
import { VenusError } from './errors.ts';
import {
  type EdgeToWorkerFrame,
  EdgeToWorkerFrameSchema,
  type WorkerToEdgeFrame,
  WorkerToEdgeFrameSchema,
} from './relay-frames.ts';
import { hotWorkerFrame } from './relay-hot-frames.ts';

/**
 * The wire form of relay frames between processes: one msgpack document per binary WebSocket
 * message, at RELAY_PATH on the GPU worker. Plain msgpack (no record extension), so any msgpack
 * implementation can speak it; audio stays binary (`bin`), not base64, both ways: microphone
 * audio in `audio` frames, assistant audio in `assistant_audio` frames (timeline events carry
 * only MediaRefs).
 */
export const RELAY_PATH = '/relay';

/**
 * Close codes a worker ends a relay socket with (4000-4999 are the application's). The edge
 * reconnects after any of them; a peer that stops answering pings is cut without a close frame (1006).
 */
export const RELAY_CLOSE_CODES = {
  /** The peer left more than its send-buffer limit unread: dropped rather than grow memory. */
  slowConsumer: 4008,
  /** A message that is not a msgpack relay frame with a session. */
  undecodable: 4002,
  /** The worker is shutting down. */
  goingAway: 1001,
} as const;

const packr = new Packr({ useRecords: false, mapsAsObjects: true, variableMapSize: true });

export type RelayDecodeResult<F> =
  | { ok: true; frame: F }
  | { ok: false; error: VenusError /** The session the bytes named, when they named one. */; session?: string };

/** msgpack bytes of one relay frame, either direction. */
export function encodeRelayFrame(frame: EdgeToWorkerFrame | WorkerToEdgeFrame): Uint8Array {
  return packr.pack(frame);
}

/** Decodes and validates one frame from the edge (the worker's boundary). */
export function decodeEdgeToWorkerFrame(bytes: Uint8Array): RelayDecodeResult<EdgeToWorkerFrame> {
  return decodeWith(bytes, EdgeToWorkerFrameSchema);
}

/**
 * Decodes and validates one frame from the worker (the edge's boundary). A speaking session's two
 * frames per audio chunk are checked by hand first (relay-hot-frames.ts), everything else, and
 * anything those checks do not take, by the schema.
 */
export function decodeWorkerToEdgeFrame(bytes: Uint8Array): RelayDecodeResult<WorkerToEdgeFrame> {
  return decodeWith(bytes, WorkerToEdgeFrameSchema, hotWorkerFrame);
}

/**
 * msgpackr hands `bin` fields out as Buffer views into the message, whose `.buffer` is the whole
 * socket buffer (often a shared pool) and whose `.slice()` is another view: audio gets a plain
 * Uint8Array of its own, so that `.buffer` and `.slice()` hold exactly its bytes.
 */
function ownAudioBytes<F>(frame: F): F {
  const f = frame as { kind?: string; pcm16k?: Uint8Array; pcm24k?: Uint8Array };
  if (f.kind === 'audio' && f.pcm16k !== undefined) f.pcm16k = new Uint8Array(f.pcm16k);
  if (f.kind === 'assistant_audio' && f.pcm24k !== undefined) f.pcm24k = new Uint8Array(f.pcm24k);
  return frame;
}

function decodeWith<F>(
  bytes: Uint8Array,
  schema: z.ZodType<F>,
  hot?: (value: unknown) => F | undefined,
): RelayDecodeResult<F> {
  let value: unknown;
  try {
    value = packr.unpack(bytes);
  } catch (cause) {
    return { ok: false, error: new VenusError('invalid_event', 'relay frame is not valid msgpack', { cause }) };
  }
  const checked = hot?.(value);
  if (checked !== undefined) return { ok: true, frame: checked }; // its samples are already its own
  const parsed = schema.safeParse(value);
  if (parsed.success) return { ok: true, frame: ownAudioBytes(parsed.data) };
  const issue = parsed.error.issues[0];
  const where = issue?.path.join('.') || '(root)';
  const error = new VenusError('invalid_event', `invalid relay frame at ${where}: ${issue?.message ?? 'malformed'}`, {
    cause: parsed.error,
  });
  const session =
    typeof value === 'object' && value !== null && 'session' in value && typeof value.session === 'string'
      ? value.session
      : undefined;
  return session ? { ok: false, error, session } : { ok: false, error };
}
