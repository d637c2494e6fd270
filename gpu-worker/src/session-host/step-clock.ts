/**
 * Drift-free periodic timer for a foreground loop: boundaries fall at start + k * period, however long
 * each tick's work takes, so a slow step shows up as a missed deadline rather than a stretched chunk.
 */
export class StepClock {
  private timer: NodeJS.Timeout | null = null;
  private origin = 0;
  private ticks = 0;

  constructor(
    private periodMs: number,
    private readonly onTick: () => void,
  ) {}

  start(): void {
    this.origin = performance.now();
    this.ticks = 0;
    this.schedule();
  }

  setPeriod(periodMs: number): void {
    if (periodMs === this.periodMs) return;
    this.periodMs = periodMs;
    if (this.timer) {
      this.stop();
      this.start();
    }
  }

  /** When the next tick is due (performance.now() time), or null when stopped. */
  get nextDueMs(): number | null {
    return this.timer ? this.origin + this.ticks * this.periodMs : null;
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    this.ticks += 1;
    const due = this.origin + this.ticks * this.periodMs;
    this.timer = setTimeout(
      () => {
        this.onTick();
        if (this.timer) this.schedule();
      },
      Math.max(0, due - performance.now()),
    );
  }
}
