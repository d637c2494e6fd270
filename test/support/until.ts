/**
 * Polls `cond` until it holds (running `refresh` before each new look, e.g. to re-read a store); fails
 * naming `what` after `timeoutMs`. A wait for an outcome, not a timing assertion.
 */
export async function until(
  what: string,
  cond: () => boolean,
  timeoutMs = 30_000,
  refresh?: () => Promise<void>,
): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
    await refresh?.();
  }
}
