export interface ProgressTickerOptions {
  firstMs: number;
  everyMs: number;
  onTick(): void;
}

/**
 * Calls `onTick` once after `firstMs`, then every `everyMs`, until stopped: the "still working"
 * schedule of a running delegation. Returns the stop function.
 */
export function startProgressTicker({ firstMs, everyMs, onTick }: ProgressTickerOptions): () => void {
  let interval: ReturnType<typeof setInterval> | undefined;
  const first = setTimeout(() => {
    onTick();
    if (everyMs > 0) interval = setInterval(onTick, everyMs);
  }, firstMs);
  return () => {
    clearTimeout(first);
    if (interval !== undefined) clearInterval(interval);
  };
}
