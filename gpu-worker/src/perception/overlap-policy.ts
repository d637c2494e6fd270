import type { OutputStep } from '@venus/protocol';
import type { Burst, BurstMilestone } from './voice-activity.ts';

export type Interruption = NonNullable<OutputStep['interruption']>;

/**
 * The reference model's v1 rules for user speech that overlaps its own speech (heard through the
 * VAD; there is no speech recognition). They are heuristics, to be replaced by trained control heads:
 *
 * 1. A burst whose level is low (mean power of its speech frames below ABSOLUTE_FLOOR_DB, or more
 *    than RELATIVE_FLOOR_DB below the session's typical foreground level) is background speech
 *    (a TV, someone across the room): `continue / background`.
 * 2. Otherwise a burst with SUSTAINED_MS (600 ms) of speech is a bid for the floor:
 *    `discard / interruption` without cancelling work, and the assistant stops speaking.
 * 3. Otherwise a burst that ends before that is a backchannel ("mm-hm"): `continue / backchannel`.
 *
 * Each overlapping burst is judged once: at the frame it reaches 600 ms of speech, or when it
 * ends (500 ms of silence), whichever comes first. Bursts that do not overlap the assistant's
 * speech are not judged; long ones teach the session its foreground level.
 *
 * @example
 *   const verdict = judgeOverlap(milestone, session.voice.foregroundDb); // null: not decided yet
 */
export const OVERLAP_RULES = {
  sustainedMs: 600,
  absoluteFloorDb: -40,
  relativeFloorDb: 20,
} as const;

export function isBackgroundLevel(levelDb: number, foregroundDb: number | null): boolean {
  if (levelDb < OVERLAP_RULES.absoluteFloorDb) return true;
  return foregroundDb !== null && levelDb < foregroundDb - OVERLAP_RULES.relativeFloorDb;
}

export function judgeOverlap(milestone: BurstMilestone, foregroundDb: number | null): Interruption | null {
  const { burst, at } = milestone;
  if (!burst.overlapped || burst.judged) return null;
  if (isBackgroundLevel(burst.levelDb, foregroundDb)) {
    return { action: 'continue', cause: 'background', cancelsWork: false };
  }
  if (at === 'sustained') return { action: 'discard', cause: 'interruption', cancelsWork: false };
  return { action: 'continue', cause: 'backchannel', cancelsWork: false };
}

/**
 * Words that take the floor as soon as the recogniser's partial hypothesis shows them, before the
 * burst reaches SUSTAINED_MS: the user wants the assistant to stop now. Corrections ("actually",
 * "no, make it ...") are left to the final transcript, which says what to do instead.
 */
const EARLY_STOP = /^(stop|wait|hold on|never mind|cancel that|forget it)\b/;

/** Whether an overlapping burst's partial words ask the assistant to stop at once. */
export function earlyStop(partial: string): boolean {
  return EARLY_STOP.test(partial.trim().toLowerCase());
}

/** Whether `burst` (overlapping, not judged, not background by level) is asked by its partial words to stop at once. */
export function stopsEarly(
  burst: Readonly<Burst> | null,
  partial: string,
  foregroundDb: number | null,
): burst is Burst {
  return (
    burst?.overlapped === true && !burst.judged && earlyStop(partial) && !isBackgroundLevel(burst.levelDb, foregroundDb)
  );
}
