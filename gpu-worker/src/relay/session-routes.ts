/** A connection as the routes see it: somewhere to write encoded frames. */
export interface RouteTarget {
  sendBytes(bytes: Uint8Array): void;
}

export interface SessionRoutesOptions {
  /** How long the sessions of a lost connection wait to be reclaimed by an edge's re-`open`. */
  graceMs: number;
  /** Worker frames kept per orphaned session; past this the session is ended at once. */
  maxOrphanBytes: number;
  /** Ends a session on the host (no edge owns it any more). */
  endSession(session: string, reason: string): void;
}

interface Orphan {
  buffered: Uint8Array[];
  bytes: number;
  timer: ReturnType<typeof setTimeout>;
}

export type ClaimResult = 'new' | 'owned' | 'reclaimed' | 'conflict';

/**
 * Which edge connection owns each session on this worker. The connection that opens a session owns
 * it; frames for it from any other connection are refused. When a connection drops, its sessions
 * become orphans for a grace period: the worker's frames for them are kept (bounded), and an edge that
 * reconnects and re-sends `open` reclaims the session and receives them. Otherwise the session ends.
 *
 * @example
 *   const routes = new SessionRoutes({ graceMs: 15_000, maxOrphanBytes: 1 << 20, endSession });
 *   if (routes.claim('s1', connection) === 'conflict') refuse();
 *   routes.deliver('s1', bytes);
 */
export class SessionRoutes<C extends RouteTarget> {
  readonly #owners = new Map<string, C>();
  readonly #orphans = new Map<string, Orphan>();
  readonly #options: SessionRoutesOptions;
  /** Worker frames that had no owner and no orphan to wait in (e.g. for an already-ended session). */
  unroutable = 0;

  constructor(options: SessionRoutesOptions) {
    this.#options = options;
  }

  /** Sessions owned or waiting to be reclaimed. */
  get size(): number {
    return this.#owners.size + this.#orphans.size;
  }

  /** Every session owned or waiting to be reclaimed. */
  sessions(): string[] {
    return [...this.#owners.keys(), ...this.#orphans.keys()];
  }

  owner(session: string): C | undefined {
    return this.#owners.get(session);
  }

  /** An `open` from `connection`: take a new session, or reclaim an orphan (flushing what waited). */
  claim(session: string, connection: C): ClaimResult {
    const owner = this.#owners.get(session);
    if (owner !== undefined) return owner === connection ? 'owned' : 'conflict';
    this.#owners.set(session, connection);
    const orphan = this.#orphans.get(session);
    if (orphan === undefined) return 'new';
    this.#orphans.delete(session);
    clearTimeout(orphan.timer);
    for (const bytes of orphan.buffered) connection.sendBytes(bytes);
    return 'reclaimed';
  }

  /** One encoded worker frame for `session`: to its owner, or into its orphan buffer. */
  deliver(session: string, bytes: Uint8Array): void {
    const owner = this.#owners.get(session);
    if (owner !== undefined) {
      owner.sendBytes(bytes);
      return;
    }
    const orphan = this.#orphans.get(session);
    if (orphan === undefined) {
      this.unroutable += 1;
      return;
    }
    if (orphan.bytes + bytes.length > this.#options.maxOrphanBytes) {
      // Keeping more would grow memory for an edge that may never return; a reclaim after this
      // opens a new incarnation from the timeline store instead.
      this.#endOrphan(session, 'edge connection lost: too much output waited for it');
      return;
    }
    orphan.buffered.push(bytes);
    orphan.bytes += bytes.length;
  }

  /** The session ended (the host said `closed`): forget it. */
  release(session: string): void {
    this.#owners.delete(session);
    const orphan = this.#orphans.get(session);
    if (orphan !== undefined) {
      clearTimeout(orphan.timer);
      this.#orphans.delete(session);
    }
  }

  /** `connection` is gone: its sessions wait for a reclaim. */
  orphanAll(connection: C): void {
    for (const [session, owner] of this.#owners) {
      if (owner !== connection) continue;
      this.#owners.delete(session);
      const timer = setTimeout(() => this.#endOrphan(session, 'edge connection lost'), this.#options.graceMs);
      timer.unref?.();
      this.#orphans.set(session, { buffered: [], bytes: 0, timer });
    }
  }

  /** Ends every session (the relay is closing). */
  endAll(reason: string): void {
    const sessions = [...this.#owners.keys(), ...this.#orphans.keys()];
    for (const orphan of this.#orphans.values()) clearTimeout(orphan.timer);
    this.#owners.clear();
    this.#orphans.clear();
    for (const session of sessions) this.#options.endSession(session, reason);
  }

  #endOrphan(session: string, reason: string): void {
    const orphan = this.#orphans.get(session);
    if (orphan === undefined) return;
    clearTimeout(orphan.timer);
    this.#orphans.delete(session);
    this.#options.endSession(session, reason);
  }
}
