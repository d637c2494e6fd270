import type { TimelineEvent } from '@venus/protocol';
import { expect } from 'vitest';
import type { RealtimeClient } from '../../embedded/demo/realtime-client.ts';
import type { RedisTimelineStore } from '../../gpu-worker/src/timeline/index.ts';
import { until } from './until.ts';

/** Nothing stored before the move is lost, and seqs stay contiguous across incarnations. */
export function expectTimelineKept(before: readonly TimelineEvent[], after: readonly TimelineEvent[]): void {
  expect(after.slice(0, before.length)).toEqual(before);
  expect(after.map((e) => e.seq)).toEqual(after.map((_, i) => i + 1));
}

/**
 * The delegation that was running when its session moved is delivered to the new incarnation
 * (incarnation 1) once: one landing and one admission there, whatever the old one had, and never
 * expired. Resolves with the stored timeline once the admission is in it.
 */
export async function expectDeliveredOnce(
  store: RedisTimelineStore,
  c: RealtimeClient,
  workId: string,
): Promise<TimelineEvent[]> {
  await c.waitForTimeline((e) => e.type === 'work.admitted' && e.data.workId === workId, 120_000);
  let after = await store.read(c.sessionId);
  await until(
    `the admission of ${workId} to be stored`,
    () => after.some((e) => e.type === 'work.admitted' && e.data.workId === workId),
    30_000,
    async () => {
      after = await store.read(c.sessionId);
    },
  );
  const incarnations = after.filter((e) => e.type === 'session.incarnation').map((e) => e.data.incarnation);
  expect(incarnations).toEqual([0, 1]);
  const resumedAt = after.find((e) => e.type === 'session.incarnation' && e.data.incarnation === 1)?.seq ?? 0;
  const results = after.filter((e) => e.type === 'work.result' && e.data.result.workId === workId);
  // A result that landed before the move but was not admitted yet comes again to the new incarnation.
  expect(results.filter((e) => e.seq > resumedAt)).toHaveLength(1);
  const admitted = after.filter((e) => e.type === 'work.admitted' && e.data.workId === workId);
  expect(admitted.map((e) => e.seq > resumedAt)).toEqual([true]);
  expect(after.some((e) => e.type === 'work.state' && e.data.workId === workId && e.data.state === 'EXPIRED')).toBe(
    false,
  );
  return after;
}
