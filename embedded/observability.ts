import type { SessionHost } from '@venus/gpu-worker';
import { type DelegationTracing, TimelineMetrics, type VenusMetrics } from '@venus/protocol/node';

/**
 * A session host's series and traces, read off its public hooks only: the step stats' listener
 * (step cost, deadline misses), its session count at each scrape, and its frames (turn latencies,
 * delegations by state, delegation admission spans). Returns the unsubscribe.
 *
 * @example
 *   const tracing = new DelegationTracing();
 *   const host = new SessionHost({ model, store, executor: tracing.wrap(executor) });
 *   const stop = observeHost(host, { metrics, worker: 'gpu-1', tracing });
 */
export function observeHost(
  host: SessionHost,
  options: { metrics: VenusMetrics; worker: string; tracing: DelegationTracing },
): () => void {
  const { metrics, worker, tracing } = options;
  metrics.watchSessions(worker, () => host.sessionCount);
  const turns = new TimelineMetrics(metrics, worker);
  const unsubscribes = [
    host.stepStats.onRecord((latencyMs, missed) => metrics.recordStep(worker, latencyMs, missed)),
    host.onFrame(turns.observe),
    host.onFrame(tracing.observe),
  ];
  return () => {
    for (const unsubscribe of unsubscribes) unsubscribe();
  };
}
