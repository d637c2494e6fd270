import { createLogger, type MediaStore } from '@venus/protocol';
import type { RecentAudio } from './timeline-replay.ts';

const log = createLogger('gpu-worker.recent-audio');

/** One input of the recent audio window with its samples, as a resumed model hears it again. */
export interface RecentPcm {
  inputSeq: number;
  pcm: Int16Array;
}

/**
 * Reads the samples of a resumed session's recent audio window from the media store, with the
 * store's own `recent()` (one read of the track's newest segments, not one per input). It asks for
 * twice the window's length: the track may end with segments whose timeline events were never
 * stored. Only the unbroken tail is kept: audio with a hole in it (a segment retention evicted)
 * would make the recogniser hear words that were never next to each other. A store that cannot
 * be read gives nothing: the session resumes without the window rather than not at all.
 */
export async function readRecentAudio(
  media: MediaStore,
  session: string,
  window: readonly RecentAudio[],
): Promise<RecentPcm[]> {
  if (window.length === 0) return [];
  const windowMs = window.reduce((sum, input) => sum + input.audio.durationMs, 0);
  let held: Map<string, Int16Array>;
  try {
    const segments = await media.recent(session, 'user', 2 * Math.max(windowMs, 1));
    held = new Map(segments.map(({ ref, pcm }) => [ref.segmentId, pcm]));
  } catch (err) {
    log.warn({ err, session }, 'recent audio window unreadable; resuming without it');
    return [];
  }
  const kept: RecentPcm[] = [];
  for (const input of window) {
    const pcm = held.get(input.audio.segmentId);
    if (pcm === undefined) kept.length = 0;
    else kept.push({ inputSeq: input.inputSeq, pcm });
  }
  return kept;
}
