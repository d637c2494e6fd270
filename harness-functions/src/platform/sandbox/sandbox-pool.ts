import { SandboxThread, type SandboxThreadOptions } from './sandbox-thread.ts';

export interface SandboxPoolOptions {
  /** Threads alive at once, busy or idle (default 8); further jobs wait. */
  maxThreads?: number;
  /**
   * Threads one tenant may hold busy at once (default half of maxThreads, at least 1). A tenant at
   * its share waits for its own threads; the rest of the pool stays free for other tenants, so one
   * tenant's slow or stuck invocations never queue anyone else's.
   */
  maxThreadsPerTenant?: number;
  /** Fresh threads kept started for this heap size, so the first job of a tenant does not wait (default 1). */
  warm?: number;
  /** Heap size the warm threads get (default 64 MB, the default function limit). */
  warmMemoryMb?: number;
  /** Idle threads a tenant keeps per heap size (default 2). */
  maxIdlePerTenant?: number;
  /** An idle thread is stopped after this long unused (default 30 s). */
  idleMs?: number;
  stackSizeMb?: number;
  /** What deployed code's fetch goes through (default: the platform's egress guard); see SandboxThreadOptions. */
  fetch?: typeof fetch;
}

interface Idle {
  thread: SandboxThread;
  timer?: ReturnType<typeof setTimeout>;
}

interface Waiter {
  tenant: string;
  memoryMb: number;
  resolve(thread: SandboxThread): void;
  reject(error: unknown): void;
}

/**
 * Started sandbox threads, reused per tenant. A thread that has run one tenant's code only ever
 * runs that tenant's code again, so leftovers of a job (a stray microtask loop, a warmed JIT) can
 * only hurt the tenant that left them; fresh threads are kept warm for whoever comes next. Each
 * tenant holds at most `maxThreadsPerTenant` busy threads; waiters are served in order, skipping
 * tenants at their share.
 *
 * @example
 *   const pool = new SandboxPool({ maxThreads: 4 });
 *   const thread = await pool.acquire('acme', 64);
 *   try { await thread.run(job, { wallMs: 5000 }); } finally { pool.release(thread, 'acme'); }
 */
export class SandboxPool {
  readonly #maxThreads: number;
  readonly #warm: number;
  readonly #warmMemoryMb: number;
  readonly #maxIdlePerTenant: number;
  readonly #idleMs: number;
  readonly #maxPerTenant: number;
  readonly #threadOptions: SandboxThreadOptions;
  /** Busy threads per tenant (acquired, not yet released). */
  readonly #held = new Map<string, number>();
  readonly #threads = new Set<SandboxThread>();
  /** Never used: any tenant may take them. Keyed by heap size. */
  readonly #fresh = new Map<number, SandboxThread[]>();
  /** Used by a tenant, keyed by `${tenant}\n${memoryMb}`. */
  readonly #idle = new Map<string, Idle[]>();
  readonly #waiters: Waiter[] = [];
  #closed = false;

  constructor(options: SandboxPoolOptions = {}) {
    this.#maxThreads = Math.max(1, options.maxThreads ?? 8);
    this.#warm = Math.max(0, options.warm ?? 1);
    this.#warmMemoryMb = options.warmMemoryMb ?? 64;
    this.#maxIdlePerTenant = Math.max(0, options.maxIdlePerTenant ?? 2);
    this.#idleMs = options.idleMs ?? 30_000;
    this.#maxPerTenant = Math.max(1, options.maxThreadsPerTenant ?? Math.floor(this.#maxThreads / 2));
    this.#threadOptions = {
      ...(options.stackSizeMb === undefined ? {} : { stackSizeMb: options.stackSizeMb }),
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    };
    this.#topUpWarm();
  }

  get size(): number {
    return this.#threads.size;
  }

  /** Threads `tenant` holds busy now. */
  heldBy(tenant: string): number {
    return this.#held.get(tenant) ?? 0;
  }

  /** Every acquire is paired with one release, also when it rejects after its slot was counted. */
  async acquire(tenant: string, memoryMb: number): Promise<SandboxThread> {
    if (this.#closed) throw new Error('the sandbox pool is closed');
    const thread = this.#take(tenant, memoryMb);
    if (thread !== undefined) return this.#whenReady(thread, tenant, memoryMb);
    return new Promise<SandboxThread>((resolve, reject) => {
      this.#waiters.push({ tenant, memoryMb, resolve, reject });
    }).then((next) => this.#whenReady(next, tenant, memoryMb));
  }

  /** Hands a thread back after a job; a dead thread is simply forgotten. */
  release(thread: SandboxThread, tenant: string): void {
    if (!thread.alive || this.#closed) {
      this.#unhold(tenant);
      this.#forget(thread);
      this.#serveWaiters();
      return;
    }
    const waiter = this.#waiters.findIndex((w) => w.tenant === tenant && w.memoryMb === thread.memoryMb);
    if (waiter >= 0) {
      // Straight to the same tenant's next job: its count of held threads does not change.
      this.#waiters.splice(waiter, 1)[0]!.resolve(thread);
      return;
    }
    this.#unhold(tenant);
    const key = idleKey(tenant, thread.memoryMb);
    const idle = this.#idle.get(key) ?? [];
    if (idle.length >= this.#maxIdlePerTenant) {
      void this.#stop(thread);
      return;
    }
    const entry: Idle = { thread };
    entry.timer = setTimeout(() => {
      const list = this.#idle.get(key);
      const index = list?.indexOf(entry) ?? -1;
      if (list && index >= 0) list.splice(index, 1);
      void this.#stop(thread);
    }, this.#idleMs);
    entry.timer.unref();
    idle.push(entry);
    this.#idle.set(key, idle);
    this.#serveWaiters();
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const waiter of this.#waiters.splice(0)) waiter.reject(new Error('the sandbox pool is closed'));
    for (const list of this.#idle.values()) for (const entry of list) clearTimeout(entry.timer);
    this.#idle.clear();
    this.#fresh.clear();
    await Promise.all([...this.#threads].map((thread) => thread.terminate()));
    this.#threads.clear();
  }

  #unhold(tenant: string): void {
    const held = this.heldBy(tenant) - 1;
    if (held > 0) this.#held.set(tenant, held);
    else this.#held.delete(tenant);
  }

  /** A thread for `tenant` now, counted as held by it, or undefined (pool full or tenant at its share). */
  #take(tenant: string, memoryMb: number): SandboxThread | undefined {
    if (this.heldBy(tenant) >= this.#maxPerTenant) return undefined;
    const thread = this.#find(tenant, memoryMb);
    if (thread !== undefined) this.#held.set(tenant, this.heldBy(tenant) + 1);
    return thread;
  }

  #find(tenant: string, memoryMb: number): SandboxThread | undefined {
    const idle = this.#idle.get(idleKey(tenant, memoryMb));
    while (idle && idle.length > 0) {
      const entry = idle.pop()!;
      clearTimeout(entry.timer);
      if (entry.thread.alive) return entry.thread;
    }
    const fresh = this.#fresh.get(memoryMb);
    while (fresh && fresh.length > 0) {
      const thread = fresh.shift()!;
      if (thread.alive) {
        this.#topUpWarm();
        return thread;
      }
    }
    if (this.#threads.size >= this.#maxThreads) this.#evictIdle();
    if (this.#threads.size < this.#maxThreads) return this.#spawn(memoryMb);
    return undefined;
  }

  async #whenReady(thread: SandboxThread, tenant: string, memoryMb: number): Promise<SandboxThread> {
    try {
      await thread.ready;
      return thread;
    } catch {
      this.#forget(thread);
      // A thread that could not start is replaced once; a second failure is a real problem.
      const replacement = this.#spawn(memoryMb);
      try {
        await replacement.ready;
      } catch (error) {
        this.#forget(replacement);
        this.#unhold(tenant);
        this.#serveWaiters();
        throw error;
      }
      return replacement;
    }
  }

  #spawn(memoryMb: number): SandboxThread {
    const thread = new SandboxThread(memoryMb, this.#threadOptions);
    this.#threads.add(thread);
    thread.onExit(() => {
      this.#forget(thread);
      this.#serveWaiters();
      this.#topUpWarm();
    });
    return thread;
  }

  #topUpWarm(): void {
    if (this.#closed || this.#warm === 0) return;
    const fresh = this.#fresh.get(this.#warmMemoryMb) ?? [];
    this.#fresh.set(this.#warmMemoryMb, fresh);
    while (fresh.length < this.#warm && this.#threads.size < this.#maxThreads)
      fresh.push(this.#spawn(this.#warmMemoryMb));
  }

  /** Makes room for a new thread by stopping the longest-idle thread of any tenant. */
  #evictIdle(): void {
    for (const [key, list] of this.#idle) {
      const entry = list.shift();
      if (list.length === 0) this.#idle.delete(key);
      if (entry === undefined) continue;
      clearTimeout(entry.timer);
      this.#forget(entry.thread);
      void entry.thread.terminate();
      return;
    }
  }

  #serveWaiters(): void {
    for (let i = 0; i < this.#waiters.length; ) {
      const waiter = this.#waiters[i]!;
      const thread = this.#take(waiter.tenant, waiter.memoryMb);
      if (thread === undefined) {
        i++;
        continue;
      }
      this.#waiters.splice(i, 1);
      waiter.resolve(thread);
    }
  }

  async #stop(thread: SandboxThread): Promise<void> {
    this.#forget(thread);
    await thread.terminate();
    this.#serveWaiters();
  }

  #forget(thread: SandboxThread): void {
    this.#threads.delete(thread);
    for (const list of this.#fresh.values()) {
      const index = list.indexOf(thread);
      if (index >= 0) list.splice(index, 1);
    }
  }
}

function idleKey(tenant: string, memoryMb: number): string {
  return `${tenant}\n${memoryMb}`;
}
