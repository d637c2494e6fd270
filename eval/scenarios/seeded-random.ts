/**
 * A deterministic generator (mulberry32 over an FNV-1a hash of a text seed), so the same seed and
 * sample name always give the same scenario, on any machine.
 *
 * @example
 *   const rng = new SeededRandom('42:user_backchannel:3');
 *   rng.pick(['mm-hm', 'yeah']); rng.uniform(1.5, 3);
 */
export class SeededRandom {
  private state: number;

  constructor(seed: string) {
    let h = 2166136261;
    for (let i = 0; i < seed.length; i++) h = Math.imul(h ^ seed.charCodeAt(i), 16777619);
    this.state = h >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = Math.imul(this.state ^ (this.state >>> 15), 1 | this.state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  uniform(min: number, max: number): number {
    return min + (max - min) * this.next();
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }

  /** `items[i]` for the i-th sample of a set, so a set of n samples covers its bank evenly. */
  cycle<T>(items: readonly T[], index: number): T {
    const item = items[index % items.length];
    if (item === undefined) throw new Error('cycle over an empty list');
    return item;
  }

  /** A callable view for APIs that take `() => number`. */
  get fn(): () => number {
    return () => this.next();
  }
}
