import { MEDIA_TRACKS } from './media-store.ts';
import type { WorkerToEdgeFrame } from './relay-frames.ts';

/**
 * The two worker frames a speaking session sends 50 times a second each (`assistant_audio` and the
 * `timeline` frame of its `assistant.audio` event), checked by hand before the edge pays for the
 * schema (about 4 and 6 µs a frame with zod, against well under 1 µs here). Each check is at
 * least as strict as WorkerToEdgeFrameSchema, field for field, and builds what the schema would
 * give (only the schema's keys, in its order, the samples in an array of their own); anything it
 * does not accept returns undefined and goes to the schema, which accepts or names the fault.
 * relay-hot-frames.test.ts checks both against the schema on valid frames and on mutations of
 * them, so a change to the schema that this file missed fails there.
 */
export function hotWorkerFrame(value: unknown): WorkerToEdgeFrame | undefined {
  if (!isRecord(value)) return undefined;
  if (value.kind === 'assistant_audio') return assistantAudio(value);
  if (value.kind === 'timeline') return assistantAudioEvent(value);
  return undefined;
}

type Record_ = Record<string, unknown>;

function isRecord(value: unknown): value is Record_ {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
const count = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const positiveCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) > 0;
/** Finite and not negative (the schema's `z.number().nonnegative()`; zod refuses infinities). */
const nonNegative = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;
const TRACKS: ReadonlySet<unknown> = new Set(MEDIA_TRACKS);

function assistantAudio(v: Record_): WorkerToEdgeFrame | undefined {
  const { session, utteranceId, audioChunkSeq, pcm24k } = v;
  if (!nonEmpty(session) || typeof utteranceId !== 'string' || !count(audioChunkSeq)) return undefined;
  if (!(pcm24k instanceof Uint8Array)) return undefined;
  return { kind: 'assistant_audio', session, utteranceId, audioChunkSeq, pcm24k: new Uint8Array(pcm24k) };
}

function assistantAudioEvent(v: Record_): WorkerToEdgeFrame | undefined {
  const { session, event } = v;
  if (!nonEmpty(session) || !isRecord(event)) return undefined;
  if (event.type !== 'assistant.audio' || event.stream !== 'assistant') return undefined;
  if (!nonEmpty(event.session) || !positiveCount(event.seq) || !count(event.chunk) || !nonNegative(event.atMs)) {
    return undefined;
  }
  const data = event.data;
  if (!isRecord(data) || typeof data.utteranceId !== 'string' || !count(data.audioChunkSeq)) return undefined;
  if (!nonNegative(data.startMs) || !nonNegative(data.durationMs)) return undefined;
  const audio = data.audio;
  if (!isRecord(audio) || !nonEmpty(audio.segmentId) || !TRACKS.has(audio.track)) return undefined;
  if (!nonNegative(audio.offsetMs) || !nonNegative(audio.durationMs)) return undefined;
  if (audio.sampleRateHz !== 16_000 && audio.sampleRateHz !== 24_000) return undefined;
  return {
    kind: 'timeline',
    session,
    event: {
      session: event.session,
      seq: event.seq,
      chunk: event.chunk,
      atMs: event.atMs,
      stream: 'assistant',
      type: 'assistant.audio',
      data: {
        utteranceId: data.utteranceId,
        audioChunkSeq: data.audioChunkSeq,
        audio: {
          segmentId: audio.segmentId,
          track: audio.track as (typeof MEDIA_TRACKS)[number],
          offsetMs: audio.offsetMs,
          durationMs: audio.durationMs,
          sampleRateHz: audio.sampleRateHz,
        },
        startMs: data.startMs,
        durationMs: data.durationMs,
      },
    },
  };
}
