/** Foreground step latencies and deadline misses across a host's sessions, for `npm run bench`. */
export class StepStats {
  private samples: number[] = [];
  steps = 0;
  missed = 0;

  record(latencyMs: number, missed: boolean): void {
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
