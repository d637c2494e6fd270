/**
 * `promise`'s value, or undefined once `ms` have passed first or when it rejects: for a wait that
 * must not hold up its caller for long (a slow scrape, a synthesis still under way). The timer is
 * cleared either way.
 *
 * @example
 *   const counts = await withTimeout(queue.getJobCounts(), 500); // undefined: too slow, or failed
 */
export async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise.catch(() => undefined), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
