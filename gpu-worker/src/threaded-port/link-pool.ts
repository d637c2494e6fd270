import { VenusError } from '@venus/protocol';
import { closeThreads, type WorkerLink } from './worker-link.ts';

/** How a pool starts (and restarts) the thread in slot `index`. */
export type StartLink<Out extends { t: string }> = (index: number) => Promise<WorkerLink<Out>>;

const RESTART_ATTEMPTS = 5;
const RESTART_BACKOFF_MS = 200;

/**
 * The inference threads of a model port, kept alive: when a thread exits or crashes while the pool
 * is open, its calls fail with `model_unavailable` (retryable) and a replacement thread is started
 * in the same slot. Sessions that lived on the dead thread are gone with it; their hosts reopen
 * them with a new incarnation, and `pick()` waits for a replacement when no thread is alive.
 *
 * @example
 *   const pool = await LinkPool.start(2, (i) => startInferenceLink(i));
 *   const link = await pool.pick();
 */
export class LinkPool<Out extends { t: string }> {
  private readonly slots: Array<WorkerLink<Out> | null>;
  private readonly restarting = new Map<number, Promise<void>>();
  private next = 0;
  private closed = false;
  /** Threads replaced after a crash, over the pool's life. */
  restarts = 0;

  private constructor(
    links: Array<WorkerLink<Out>>,
    private readonly startLink: StartLink<Out>,
    private readonly onRestart?: (index: number, link: WorkerLink<Out>) => void,
  ) {
    this.slots = links;
    links.forEach((link, i) => {
      this.watch(i, link);
    });
  }

  static async start<Out extends { t: string }>(
    count: number,
    startLink: StartLink<Out>,
    onRestart?: (index: number, link: WorkerLink<Out>) => void,
  ): Promise<LinkPool<Out>> {
    const started = await Promise.allSettled(Array.from({ length: count }, (_, i) => startLink(i)));
    const links = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) {
      await Promise.all(links.map((l) => l.worker.terminate()));
      throw failed.reason;
    }
    return new LinkPool(links, startLink, onRestart);
  }

  /** The live threads now. */
  get alive(): Array<WorkerLink<Out>> {
    return this.slots.filter((l): l is WorkerLink<Out> => l?.alive === true);
  }

  get size(): number {
    return this.slots.length;
  }

  /** Round-robin over live threads; waits for a restart when every thread is down. */
  async pick(): Promise<WorkerLink<Out>> {
    if (this.closed) throw new VenusError('model_unavailable', 'the model port is closed');
    let alive = this.alive;
    if (alive.length === 0 && this.restarting.size > 0) {
      await Promise.allSettled([...this.restarting.values()]);
      alive = this.alive;
    }
    if (alive.length === 0) throw new VenusError('model_unavailable', 'no inference thread is running');
    const link = alive[this.next % alive.length]!;
    this.next += 1;
    return link;
  }

  /** The thread in `index`, for tests that crash one on purpose. */
  link(index: number): WorkerLink<Out> | null {
    return this.slots[index] ?? null;
  }

  /** Resolves once no restart is in progress. */
  async settled(): Promise<void> {
    while (this.restarting.size > 0) await Promise.allSettled([...this.restarting.values()]);
  }

  /** Stops restarting; `shutdown` runs on each live thread before every thread is terminated. */
  /** Waits for replacements under way, then ends every thread (see closeThreads). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.restarting.values()]);
    await closeThreads(
      this.slots.filter((l): l is WorkerLink<Out> => l !== null),
      'the model port is closed',
    );
  }

  private watch(index: number, link: WorkerLink<Out>): void {
    link.worker.once('exit', () => {
      if (this.closed || this.slots[index] !== link) return;
      this.slots[index] = null;
      this.restarting.set(index, this.restart(index));
    });
  }

  private async restart(index: number): Promise<void> {
    try {
      for (let attempt = 0; attempt < RESTART_ATTEMPTS && !this.closed; attempt++) {
        try {
          const link = await this.startLink(index);
          if (this.closed) {
            await link.worker.terminate();
            return;
          }
          this.slots[index] = link;
          this.restarts += 1;
          this.watch(index, link);
          this.onRestart?.(index, link);
          return;
        } catch {
          await new Promise((r) => setTimeout(r, RESTART_BACKOFF_MS * 2 ** attempt));
        }
      }
    } finally {
      this.restarting.delete(index);
    }
  }
}
