/** A bucket's shape: `burst` tokens at most, refilled at `perMinute`. */
export interface BucketLimit {
  perMinute: number;
  burst: number;
}

export type Admission = { ok: true } | { ok: false; retryAfterMs: number; message: string };

/**
 * The classic token bucket: `take(n)` succeeds while tokens remain, tokens come back at a steady
 * rate up to the burst size, and a refusal says how long until `n` tokens are there.
 *
 * @example
 *   const bucket = new TokenBucket({ perMinute: 60, burst: 10 }, () => performance.now());
 *   if (!bucket.take().ok) respondWith429();
 */
export class TokenBucket {
  readonly #limit: BucketLimit;
  readonly #now: () => number;
  #tokens: number;
  #at: number;

  constructor(limit: BucketLimit, now: () => number) {
    this.#limit = limit;
    this.#now = now;
    this.#tokens = limit.burst;
    this.#at = now();
  }

  /** Takes `n` tokens, or none and says when they will be there. */
  take(n = 1): { ok: true } | { ok: false; retryAfterMs: number } {
    this.#refill();
    if (this.#tokens >= n) {
      this.#tokens -= n;
      return { ok: true };
    }
    const perMs = this.#limit.perMinute / 60_000;
    const missing = Math.min(n, this.#limit.burst) - this.#tokens;
    return { ok: false, retryAfterMs: perMs > 0 ? Math.ceil(missing / perMs) : Number.POSITIVE_INFINITY };
  }

  /** Whether `n` tokens are there now, taking none. */
  peek(n = 1): boolean {
    this.#refill();
    return this.#tokens >= n;
  }

  #refill(): void {
    const now = this.#now();
    const elapsed = Math.max(0, now - this.#at);
    this.#at = now;
    this.#tokens = Math.min(this.#limit.burst, this.#tokens + (elapsed * this.#limit.perMinute) / 60_000);
  }
}
