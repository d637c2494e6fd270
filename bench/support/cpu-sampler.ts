import { performance } from 'node:perf_hooks';

/**
 * This process's CPU time (or another running total in µs, `read`), sampled every 50 ms against the
 * wall clock. A swamped event loop runs late, so the samples are read by time and interpolated
 * rather than taken when the client says so.
 */
export class CpuSampler {
  readonly #samples: { at: number; us: number }[] = [];
  readonly #timer: ReturnType<typeof setInterval>;

  constructor(read: () => number = processCpuUs) {
    const sample = () => {
      this.#samples.push({ at: performance.timeOrigin + performance.now(), us: read() });
    };
    sample();
    this.#timer = setInterval(sample, 50);
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** CPU µs used between two epoch times (linear between the samples around each). */
  between(fromMs: number, toMs: number): number {
    return this.#at(toMs) - this.#at(fromMs);
  }

  #at(epochMs: number): number {
    const samples = this.#samples;
    const after = samples.findIndex((s) => s.at >= epochMs);
    if (after <= 0) return after === 0 ? samples[0]!.us : samples[samples.length - 1]!.us;
    const a = samples[after - 1]!;
    const b = samples[after]!;
    return a.us + ((b.us - a.us) * (epochMs - a.at)) / (b.at - a.at);
  }
}

function processCpuUs(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}
