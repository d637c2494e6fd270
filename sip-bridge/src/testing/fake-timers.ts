import type { TimerHost } from '../sip/timers.ts';

/** A fake clock for unit tests of SIP timers: `advance(ms)` fires what falls due, in order. */
export class FakeTimers implements TimerHost {
  now = 0;
  #next = 1;
  readonly #pending = new Map<number, { at: number; callback: () => void }>();

  set(callback: () => void, ms: number): unknown {
    const id = this.#next++;
    this.#pending.set(id, { at: this.now + ms, callback });
    return id;
  }

  clear(handle: unknown): void {
    this.#pending.delete(handle as number);
  }

  get pending(): number {
    return this.#pending.size;
  }

  advance(ms: number): void {
    const end = this.now + ms;
    for (;;) {
      let due: [number, { at: number; callback: () => void }] | undefined;
      for (const entry of this.#pending)
        if (entry[1].at <= end && (due === undefined || entry[1].at < due[1].at)) due = entry;
      if (due === undefined) break;
      this.#pending.delete(due[0]);
      this.now = due[1].at;
      due[1].callback();
    }
    this.now = end;
  }
}
