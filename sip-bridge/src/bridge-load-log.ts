import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Logger } from '@venus/protocol';

export interface BridgeLoadLogOptions {
  log: Logger;
  /** Calls held now (ringing or answered). */
  calls(): number;
  /** How often a line is written while calls are held (default 10 s). */
  everyMs?: number;
}

/**
 * Every `everyMs` while calls are held, one `sip bridge load` line: calls held and the event loop's
 * delay over the interval (p99 and max, ms). A bridge whose loop stalls answers SIP late (callers
 * retransmit) and paces RTP late; this says so from the bridge's own side, apart from the machine.
 * Returns a stop function.
 *
 * @example
 *   const stop = logBridgeLoad({ log, calls: () => bridge.ua.activeCalls });
 */
export function logBridgeLoad(options: BridgeLoadLogOptions): () => void {
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  let lastCalls = 0;
  const timer = setInterval(() => {
    const calls = options.calls();
    if (calls > 0 || lastCalls > 0) {
      options.log.info(
        {
          calls,
          loopDelayP99Ms: Number((loop.percentile(99) / 1e6).toFixed(1)),
          loopDelayMaxMs: Number((loop.max / 1e6).toFixed(1)),
        },
        'sip bridge load',
      );
    }
    lastCalls = calls;
    loop.reset();
  }, options.everyMs ?? 10_000);
  timer.unref();
  return () => {
    clearInterval(timer);
    loop.disable();
  };
}
