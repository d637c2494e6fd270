import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { TimelineEvent, TimelineStore } from '@venus/protocol';

export interface BenchTimelineStoreResult {
  appendP50Ms: number;
  appendP99Ms: number;
  eventsPerSec: number;
}

/**
 * Measures one-event appends, awaited one after another as a session host issues them, on a fresh
 * session that is deleted afterwards. A benchmark, not a test: callers print the numbers.
 *
 * @example
 *   const { appendP50Ms, appendP99Ms, eventsPerSec } = await benchTimelineStore(store, { events: 5000 });
 */
export async function benchTimelineStore(
  store: TimelineStore,
  options: { events: number },
): Promise<BenchTimelineStoreResult> {
  const session = `bench-${randomUUID()}`;
  const latencies: number[] = [];
  const started = performance.now();
  let elapsedMs = 0;
  try {
    for (let seq = 1; seq <= options.events; seq++) {
      const event: TimelineEvent = {
        session,
        seq,
        chunk: Math.floor(seq / 25),
        atMs: seq * 40,
        stream: 'user',
        type: 'user.audio',
        // A typical user.audio event: 40 ms of microphone audio, referenced (its samples are in the media store).
        data: {
          inputSeq: seq - 1,
          audio: {
            segmentId: `u:${seq}`,
            track: 'user',
            offsetMs: (seq - 1) * 40,
            durationMs: 40,
            sampleRateHz: 16_000,
          },
          durationMs: 40,
        },
      };
      const t0 = performance.now();
      await store.append([event]);
      latencies.push(performance.now() - t0);
    }
    elapsedMs = performance.now() - started;
  } finally {
    await store.delete(session);
  }
  latencies.sort((a, b) => a - b);
  return {
    appendP50Ms: percentile(latencies, 0.5),
    appendP99Ms: percentile(latencies, 0.99),
    eventsPerSec: elapsedMs > 0 ? (options.events * 1000) / elapsedMs : 0,
  };
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? 0;
}
