/** How many attempt ids a session remembers; a retry comes within seconds, not hundreds of results later. */
const PREFILL_IDS = 512;

/**
 * The prefill attempts a session has taken, so a retried `prefill` with the same `attemptId` is
 * acknowledged as deduplicated and never enters the context twice.
 *
 * @example
 *   const ledger = new PrefillLedger();
 *   ledger.admit('w1:0'); // true: new
 *   ledger.admit('w1:0'); // false: seen
 */
export class PrefillLedger {
  private readonly seen = new Set<string>();

  /** Records the attempt; false when it was seen before. */
  admit(attemptId: string): boolean {
    if (this.seen.has(attemptId)) return false;
    this.seen.add(attemptId);
    if (this.seen.size > PREFILL_IDS) this.seen.delete(this.seen.values().next().value as string);
    return true;
  }
}
