import type { Clock } from '../realtime/clock.ts';

/**
 * A FAKE clock for tests: time stands still until the test calls `advance`, which runs each timer
 * due on the way at its own time, in order (ties in the order they were set). Code paced by a
 * Clock (the RTP sender, playout estimates) then does exactly the same on a busy machine as on an
 * idle one, while sockets and other real timers keep running on real time.
 *
 * @example
 *   const clock = new FakeClock();
 *   const sender = new PacedOpusSender({ codec, clock, send });
 *   clock.advance(400, 20); // 400 ms in 20 ms steps
 */
export class FakeClock implements Clock {
  #now: number;
  #nextId = 1;
  readonly #timers = new Map<number, { at: number; callback: () => void }>();

  constructor(startMs = 1000) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.#nextId++;
    this.#timers.set(id, { at: this.#now + Math.max(0, ms), callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number);
  }

  /** Timers waiting to run. */
  get pending(): number {
    return this.#timers.size;
  }

  /**
   * Moves time forward by `ms`, in steps of at most `stepMs` (the time seen between two timers never
   * jumps further, as on a live event loop), running every timer that falls due.
   */
  advance(ms: number, stepMs = ms): void {
    const end = this.#now + ms;
    while (this.#now < end) this.#runUntil(Math.min(end, this.#now + stepMs));
  }

  #runUntil(until: number): void {
    for (;;) {
      let dueId: number | undefined;
      let due: { at: number; callback: () => void } | undefined;
      for (const [id, timer] of this.#timers) {
        if (timer.at <= until && (due === undefined || timer.at < due.at)) {
          dueId = id;
          due = timer;
        }
      }
      if (due === undefined || dueId === undefined) break;
      this.#timers.delete(dueId);
      this.#now = Math.max(this.#now, due.at);
      due.callback();
    }
    this.#now = until;
  }
}
