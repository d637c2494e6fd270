import { StepClock } from './step-clock.ts';

export interface ForegroundLoopOptions {
  chunkMs: number;
  /** Wall clock in ms (monotonic enough for latency figures). */
  now: () => number;
  /** Runs the work of one boundary (admission, then the model step for `chunk`); true when it stepped. */
  step: (chunk: number) => Promise<boolean>;
  /** No model to step right now (it is being reopened): boundaries pass without a step. */
  paused?: () => boolean;
  /** A step was still running at the next boundary. */
  onMissed: (chunk: number, lateMs: number, latencyMs: number) => void;
  onStepped?: (latencyMs: number) => void;
  /** Step on a timer (default). Tests drive boundaries by hand with `boundary()`. */
  autoStep?: boolean;
}

/**
 * The foreground clock of one session: a drift-free timer at the chunk period that starts at most one
 * step at a time. A step still running at the next boundary is a missed deadline (reported, never
 * queued: the loop never waits).
 */
export class ForegroundLoop {
  private readonly clock: StepClock;
  private chunkMs: number;
  private inFlight = false;
  private startedAt = 0;
  private stopped = false;
  private next = 0;

  constructor(private readonly opts: ForegroundLoopOptions) {
    this.chunkMs = opts.chunkMs;
    this.clock = new StepClock(opts.chunkMs, () => this.boundary());
  }

  /** Index of the chunk now in progress (the one the next boundary ends). */
  get currentChunk(): number {
    return this.next;
  }

  start(): void {
    if (this.opts.autoStep !== false) this.clock.start();
  }

  setPeriod(chunkMs: number): void {
    this.chunkMs = chunkMs;
    this.clock.setPeriod(chunkMs);
  }

  /** One chunk boundary. */
  boundary(): void {
    if (this.stopped) return;
    const chunk = this.next;
    this.next += 1;
    if (this.opts.paused?.()) return;
    const now = this.opts.now();
    if (this.inFlight) {
      this.opts.onMissed(chunk, Math.max(0, now - this.startedAt - this.chunkMs), now - this.startedAt);
      return;
    }
    this.inFlight = true;
    this.startedAt = now;
    void this.opts.step(chunk).then(
      (stepped) => this.settle(stepped),
      () => this.settle(false),
    );
  }

  private settle(stepped: boolean): void {
    this.inFlight = false;
    if (stepped && !this.stopped) this.opts.onStepped?.(this.opts.now() - this.startedAt);
  }

  stop(): void {
    this.stopped = true;
    this.clock.stop();
  }
}
