import { z } from 'zod';

/**
 * Media out of the timeline: timeline events refer to audio segments; the samples live in a media
 * store with a retention bound (a ring per session in the embedded default; Redis or a blob store
 * in production). A reference stays valid on the timeline after its samples were evicted: reading
 * it then answers `null` (the audit keeps the extent, not the sound).
 *
 * @example
 *   const ref = media.put('s1', 'assistant', pcm24k, 24_000);
 *   // timeline: { type: 'assistant.audio', data: { utteranceId, audio: ref, ... } }
 *   const samples = await media.read('s1', ref); // Int16Array, or null once retention dropped it
 */
export const MEDIA_TRACKS = ['user', 'assistant'] as const;
export type MediaTrack = (typeof MEDIA_TRACKS)[number];

export const MediaRefSchema = z.object({
  /** Segment id, unique within the session and track, e.g. `a:42`. */
  segmentId: z.string().min(1),
  track: z.enum(MEDIA_TRACKS),
  /** Offset of the segment on its track (ms of that track's audio before it). */
  offsetMs: z.number().nonnegative(),
  durationMs: z.number().nonnegative(),
  sampleRateHz: z.union([z.literal(16_000), z.literal(24_000)]),
});
export type MediaRef = z.infer<typeof MediaRefSchema>;

export interface MediaStore {
  /**
   * Keeps the samples and returns their reference at once; a store with a slow backend writes in
   * the background, in order. Never throws for a full store: old segments are evicted instead.
   */
  put(session: string, track: MediaTrack, pcm: Int16Array, sampleRateHz: 16_000 | 24_000): MediaRef;
  /** The samples of a segment, or null when retention has evicted them (or they never existed). */
  read(session: string, ref: MediaRef): Promise<Int16Array | null>;
  /** The most recent `windowMs` of a track still held, oldest first (failover's recent audio window). */
  recent(session: string, track: MediaTrack, windowMs: number): Promise<{ ref: MediaRef; pcm: Int16Array }[]>;
  /** The session ended: its media is deleted after the store's retention for ended sessions. */
  endSession(session: string): void;
  close(): Promise<void>;
}
