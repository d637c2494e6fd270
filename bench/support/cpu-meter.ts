/**
 * Process CPU time spent inside chosen methods, for a bench that drives one thing at a time: each
 * metered method's calls (sync or async) add the process's CPU time between call and settle to
 * their meter. A call made while the same meter is already inside a call is not counted again.
 * Only meaningful while nothing else runs in the process (the bench awaits each step in turn).
 */
export class CpuMeter {
  ms = 0;
  calls = 0;
  private depth = 0;
  private readonly restores: Array<() => void> = [];

  /** Meters `method` on `target` (a prototype or an object) until `restore()`. */
  wrap(target: object, method: string): this {
    const original = Reflect.get(target, method) as unknown;
    if (typeof original !== 'function') return this;
    const meter = this;
    const wrapped = function (this: unknown, ...args: unknown[]) {
      if (meter.depth > 0) return original.apply(this, args);
      meter.depth += 1;
      meter.calls += 1;
      const start = process.cpuUsage();
      const done = () => {
        const d = process.cpuUsage(start);
        meter.ms += (d.user + d.system) / 1000;
        meter.depth -= 1;
      };
      let result: unknown;
      try {
        result = original.apply(this, args);
      } catch (err) {
        done();
        throw err;
      }
      if (result instanceof Promise) return result.finally(done);
      done();
      return result;
    };
    Reflect.set(target, method, wrapped);
    this.restores.push(() => Reflect.set(target, method, original));
    return this;
  }

  /** Milliseconds since the last take, and resets the count. */
  take(): number {
    const ms = this.ms;
    this.ms = 0;
    return ms;
  }

  restore(): void {
    for (const r of this.restores.splice(0).reverse()) r();
  }
}

/** The methods a class's prototype defines (not inherited, not the constructor). */
export function ownMethods(proto: object): string[] {
  return Object.getOwnPropertyNames(proto).filter((name) => {
    if (name === 'constructor') return false;
    const d = Object.getOwnPropertyDescriptor(proto, name);
    return typeof d?.value === 'function';
  });
}
