/**
 * Foreground step latencies and deadline misses across a host's sessions, for `npm run bench`;
 * listeners (`onRecord`) see every step as it is recorded (the worker's Prometheus series).
 */
export class StepStats {
  private samples: number[] = [];
  private readonly listeners = new Set<(latencyMs: number, missed: boolean) => void>();
  steps = 0;
  missed = 0;

  onRecord(listener: (latencyMs: number, missed: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  record(latencyMs: number, missed: boolean): void {
    for (const listener of this.listeners) listener(latencyMs, missed);
    if (missed) this.missed += 1;
    else {
      this.steps += 1;
      if (this.samples.length < 200_000) this.samples.push(latencyMs);
    }
  }

  reset(): void {
    this.samples = [];
    this.steps = 0;
    this.missed = 0;
  }

  percentile(p: number): number {
    if (this.samples.length === 0) return 0;
    const sorted = [...this.samples].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
  }
}
