import { createLogger, type MediaStore } from '@venus/protocol';
import type { RecentAudio } from './timeline-replay.ts';

const log = createLogger('gpu-worker.recent-audio');

/** One input of the recent audio window with its samples, as a resumed model hears it again. */
export interface RecentPcm {
  inputSeq: number;
  pcm: Int16Array;
}

/**
 * Reads the samples of a resumed session's recent audio window from the media store. Only the
 * unbroken tail is kept: audio with a hole in it (a segment retention evicted) would make the
 * recogniser hear words that were never next to each other. A store that cannot be read gives
 * nothing: the session resumes without the window rather than not at all.
 */
export async function readRecentAudio(
  media: MediaStore,
  session: string,
  window: readonly RecentAudio[],
): Promise<RecentPcm[]> {
  let samples: (Int16Array | null)[];
  try {
    samples = await Promise.all(window.map((input) => media.read(session, input.audio)));
  } catch (err) {
    log.warn({ err, session }, 'recent audio window unreadable; resuming without it');
    return [];
  }
  const kept: RecentPcm[] = [];
  for (const [i, pcm] of samples.entries()) {
    if (pcm === null) kept.length = 0;
    else kept.push({ inputSeq: window[i]!.inputSeq, pcm });
  }
  return kept;
}
