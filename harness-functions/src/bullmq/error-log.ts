import { createLogger, logUnlessTeardown } from '@venus/protocol';

const log = createLogger('harness.bullmq');

/**
 * A default error sink for queue classes: prints each distinct message at most once per
 * `windowMs`, with a count of what it held back. A Redis outage makes every connection report
 * every reconnect attempt; one line per kind of failure says as much. By default the lines go to
 * the logger, teardown noise (a connection closed while quitting) at debug, the rest as warnings.
 *
 * @example
 *   const onError = throttledErrorLog('delegation consumer');
 *   redis.on('error', onError);
 */
export function throttledErrorLog(
  label: string,
  windowMs = 5_000,
  write: (line: string, error: unknown) => void = (line, error) => logUnlessTeardown(log, error, line),
  now: () => number = Date.now,
): (error: unknown) => void {
  const seen = new Map<string, { at: number; held: number }>();
  return (error) => {
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    const last = seen.get(message);
    const at = now();
    if (last !== undefined && at - last.at < windowMs) {
      last.held++;
      return;
    }
    const held = last?.held ?? 0;
    seen.set(message, { at, held: 0 });
    if (seen.size > 100) seen.delete(seen.keys().next().value!);
    write(held > 0 ? `${label} (${held} more like it held back):` : `${label}:`, last ? message : error);
  };
}
