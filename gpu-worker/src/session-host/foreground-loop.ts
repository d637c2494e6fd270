import { StepClock } from './step-clock.ts';

export interface ForegroundLoopOptions {
  chunkMs: number;
  /** Wall clock in ms (monotonic enough for latency figures). */
  now: () => number;
  /** Runs the work of one boundary (admission, then the model step for `chunk`); true when it stepped. */
  step: (chunk: number) => Promise<boolean>;
  /**
   * Perception ticks between boundaries: every `periodMs` (when shorter than the chunk) the loop
   * offers `run` the chunk in progress; `run` returns null when there is nothing to hear now (the
   * assistant is not speaking), else the tick's work. Ticks never overlap a step: a tick is skipped
   * while a step runs or when the next boundary is under half a period away, and a boundary that
   * finds a tick running starts its step as soon as the tick ends (not a missed deadline).
   */
  tick?: { periodMs: number; run: (chunk: number) => Promise<void> | null };
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
 * queued: the loop never waits). Between boundaries, optional perception ticks let the model hear
 * sooner than the chunk (see `tick`).
 */
export class ForegroundLoop {
  private readonly clock: StepClock;
  private readonly tickClock: StepClock | null;
  private chunkMs: number;
  private inFlight: 'step' | 'tick' | null = null;
  /** A boundary came while a tick ran: its chunk steps when the tick ends. */
  private deferred: { chunk: number; at: number } | null = null;
  private startedAt = 0;
  private stopped = false;
  private next = 0;

  constructor(private readonly opts: ForegroundLoopOptions) {
    this.chunkMs = opts.chunkMs;
    this.clock = new StepClock(opts.chunkMs, () => this.boundary());
    const tick = opts.tick;
    this.tickClock = tick && tick.periodMs > 0 ? new StepClock(tick.periodMs, () => this.perceive()) : null;
  }

  /** Index of the chunk now in progress (the one the next boundary ends). */
  get currentChunk(): number {
    return this.next;
  }

  start(): void {
    if (this.opts.autoStep === false) return;
    this.clock.start();
    this.tickClock?.start();
  }

  setPeriod(chunkMs: number): void {
    this.chunkMs = chunkMs;
    this.clock.setPeriod(chunkMs);
    // Restarted with the chunk clock, so ticks keep their place between boundaries.
    if (this.tickClock && this.clock.nextDueMs !== null) {
      this.tickClock.stop();
      this.tickClock.start();
    }
  }

  /** One chunk boundary. */
  boundary(): void {
    if (this.stopped) return;
    const chunk = this.next;
    this.next += 1;
    if (this.opts.paused?.()) return;
    const now = this.opts.now();
    if (this.inFlight === 'tick') {
      this.deferred = { chunk, at: now };
      return;
    }
    if (this.inFlight === 'step' || this.deferred !== null) {
      this.opts.onMissed(chunk, Math.max(0, now - this.startedAt - this.chunkMs), now - this.startedAt);
      return;
    }
    this.runStep(chunk, now);
  }

  /** One perception tick (tests call it by hand like `boundary()`). */
  perceive(): void {
    const tick = this.opts.tick;
    if (!tick || this.stopped || this.inFlight !== null || this.opts.paused?.()) return;
    if (tick.periodMs >= this.chunkMs) return;
    const due = this.clock.nextDueMs;
    if (due !== null && due - performance.now() < tick.periodMs / 2) return;
    const work = tick.run(this.next);
    if (work === null) return;
    this.inFlight = 'tick';
    const settle = () => {
      this.inFlight = null;
      const deferred = this.deferred;
      this.deferred = null;
      if (deferred !== null && !this.stopped) this.runStep(deferred.chunk, deferred.at);
    };
    work.then(settle, settle);
  }

  private runStep(chunk: number, now: number): void {
    this.inFlight = 'step';
    this.startedAt = now;
    void this.opts.step(chunk).then(
      (stepped) => this.settle(stepped),
      () => this.settle(false),
    );
  }

  private settle(stepped: boolean): void {
    this.inFlight = null;
    if (stepped && !this.stopped) this.opts.onStepped?.(this.opts.now() - this.startedAt);
  }

  stop(): void {
    this.stopped = true;
    this.clock.stop();
    this.tickClock?.stop();
  }
}
