import {
  type EdgeToWorkerFrame,
  HANDOVER_REASON,
  toVenusError,
  type WorkerLink,
  type WorkerToEdgeFrame,
} from '@venus/protocol';
import type { RelayLinkEvent } from '../relay/relay-link.ts';
import { SessionListeners } from '../relay/session-listeners.ts';
import type { PlaceOptions, WorkerEndpoint, WorkerPlacement } from './worker-placement.ts';

type OpenFrame = Extract<EdgeToWorkerFrame, { kind: 'open' }>;

/** A session moved to another worker: what a metrics counter counts. */
export interface FailoverEvent {
  session: string;
  /** Worker id it was on. */
  from: string;
  /** `worker_lost`: its relay stayed down past the grace; `drain`: the worker handed it over. */
  reason: 'worker_lost' | 'drain';
}

export interface FleetWorkerLinkOptions {
  placement: WorkerPlacement;
  /**
   * Opens the link to one worker (on Node, a WebSocketWorkerLink); `onEvent` must receive its
   * RelayLink events, so that a lost worker is noticed.
   */
  connect(endpoint: WorkerEndpoint, onEvent: (event: RelayLinkEvent) => void): WorkerLink;
  /** Frames a session may send while its worker is being chosen or is away. Default 512. */
  maxPendingFrames?: number;
  /**
   * How long a worker's relay may stay down before its sessions are re-placed on another worker,
   * where they resume from their timelines under a new incarnation. Default 2 s. A reconnect
   * refused outright (ECONNREFUSED: the worker's process is gone) moves them at once.
   */
  failoverGraceMs?: number;
  /**
   * How often the fleet registry is asked whether the workers this edge uses are still registered
   * (placements with a registry only). Default 2.5 s; 0 turns the check off.
   */
  registryCheckMs?: number;
  /**
   * How long a worker's registration must stay gone, seen by consecutive checks, before its
   * sessions are moved although its relay still answers (a worker cut off from Redis, whose
   * timeline writes fail too). Default 11 s: longer than two of a worker's heartbeat periods (5 s
   * each at the default TTL), so a registry that restarted empty and is being refilled by
   * heartbeats moves nothing even when one beat is missed.
   */
  registryLossMs?: number;
  /** Clock for the registry check. Default `performance.now`. */
  now?(): number;
  onFailover?(event: FailoverEvent): void;
}

interface Route {
  pending: EdgeToWorkerFrame[];
  /** The session's `open` with its latest config: what re-places it elsewhere. */
  open: OpenFrame;
  worker?: { id: string; url: string; link: WorkerLink; detach: () => void };
  /** Its worker asked to hand it over: input waits in `pending` until the worker has let it go. */
  leaving?: boolean;
}

interface SharedLink {
  endpoint: WorkerEndpoint;
  link: WorkerLink;
  sessions: Set<string>;
  /** The relay is down: its sessions' frames wait here (bounded) until it returns or they move. */
  down: boolean;
  lostTimer?: ReturnType<typeof setTimeout>;
  /** When the registry check first found its registration gone (cleared once it is back). */
  unregisteredSinceMs?: number;
}

/**
 * A WorkerLink over a fleet of GPU workers: each session's `open` asks the placement for a worker,
 * and the session stays on it while it lives. Frames sent while the choice is being made, or while
 * the worker's relay is down, wait (bounded) and follow in order. One link per worker is shared by
 * all its sessions and closed when the last ends.
 *
 * Failover: when a worker's relay stays down past `failoverGraceMs`, every session on it is placed
 * on another worker (never the lost one) with its latest `open`; that worker finds the session's
 * timeline and resumes it under a new incarnation, with its context rebuilt. The client's
 * connection to the edge stays up throughout.
 *
 * A worker whose registry heartbeat has expired while its relay still answers (it lost Redis, so
 * its timeline writes fail too) is treated as lost once its registration has stayed gone for
 * `registryLossMs`: its sessions move the same way (`worker_lost`), and the old worker's late
 * writes are refused by the timeline store's contiguous seqs.
 *
 * Drain: a draining worker's `handover` frame moves its session the same way, without the loss of
 * a failover: the session's input is held from that frame on, the worker gets a last `close` with
 * HANDOVER_REASON, and once its `closed` with that reason says every event is stored the session is
 * placed elsewhere (`onFailover` reason `drain`). Each move is announced to the session's listeners
 * as a `handover` frame carrying its reason.
 *
 * @example
 *   const link = new FleetWorkerLink({
 *     placement: new RedisPlacement({ url: process.env.REDIS_URL! }),
 *     connect: (worker, onEvent) => new WebSocketWorkerLink({ url: worker.url, token, onEvent }),
 *   });
 *   await serveEdgeNode({ link, port: 8080 });
 */
export class FleetWorkerLink implements WorkerLink {
  readonly #options: FleetWorkerLinkOptions;
  readonly #maxPending: number;
  readonly #graceMs: number;
  readonly #routes = new Map<string, Route>();
  readonly #links = new Map<string, SharedLink>();
  readonly #listeners = new SessionListeners();
  readonly #now: () => number;
  readonly #registryLossMs: number;
  #registryTimer: ReturnType<typeof setInterval> | undefined;
  #checking = false;
  #closed = false;

  constructor(options: FleetWorkerLinkOptions) {
    this.#options = options;
    this.#maxPending = options.maxPendingFrames ?? 512;
    this.#graceMs = options.failoverGraceMs ?? 2_000;
    this.#registryLossMs = options.registryLossMs ?? 11_000;
    this.#now = options.now ?? (() => performance.now());
    const everyMs = options.registryCheckMs ?? 2_500;
    if (options.placement.registered !== undefined && everyMs > 0) {
      this.#registryTimer = setInterval(() => void this.checkRegistry(), everyMs);
      this.#registryTimer.unref();
    }
  }

  /**
   * Asks the registry which of the workers in use are still registered, and moves the sessions of
   * one whose registration has stayed gone for `registryLossMs`. Runs on its timer; exposed so that
   * a test can drive it with its own clock. An unreadable registry changes nothing.
   */
  async checkRegistry(): Promise<void> {
    const placement = this.#options.placement;
    if (placement.registered === undefined || this.#checking || this.#closed || this.#links.size === 0) return;
    this.#checking = true;
    try {
      const links = [...this.#links.values()];
      let live: ReadonlySet<string>;
      try {
        live = await placement.registered(links.map((shared) => shared.endpoint.id));
      } catch {
        // Says nothing about the workers; absence is only counted from readings that succeeded.
        for (const shared of links) shared.unregisteredSinceMs = undefined;
        return;
      }
      const now = this.#now();
      for (const shared of links) {
        if (live.has(shared.endpoint.id)) {
          shared.unregisteredSinceMs = undefined;
          continue;
        }
        shared.unregisteredSinceMs ??= now;
        if (now - shared.unregisteredSinceMs >= this.#registryLossMs) {
          clearTimeout(shared.lostTimer);
          this.#failover(shared);
        }
      }
    } finally {
      this.#checking = false;
    }
  }

  /** The worker url a session is on, once placed. */
  workerOf(session: string): string | undefined {
    return this.#routes.get(session)?.worker?.url;
  }

  send(frame: EdgeToWorkerFrame): void {
    const session = frame.session;
    const route = this.#routes.get(session);
    if (route === undefined) {
      if (frame.kind === 'open') {
        const fresh: Route = { pending: [frame], open: frame };
        this.#routes.set(session, fresh);
        void this.#place(session, fresh);
      } else if (frame.kind !== 'close') {
        const message = `session ${session} is not open on this edge`;
        this.#deliverLater({ kind: 'error', session, code: 'wrong_session', message });
      }
      return;
    }
    if (frame.kind === 'config') route.open = { ...route.open, config: frame.config };
    const worker = route.worker;
    if (worker !== undefined && !route.leaving && !this.#links.get(worker.url)?.down) {
      worker.link.send(frame);
      if (frame.kind === 'close') this.#end(session);
      return;
    }
    if (route.pending.length >= this.#maxPending && frame.kind !== 'close') {
      const message = `input for session ${session} was dropped while its GPU worker was being chosen`;
      this.#deliverLater({ kind: 'error', session, code: 'rate_limited', message });
      return;
    }
    route.pending.push(frame);
  }

  onFrame(session: string, listener: (frame: WorkerToEdgeFrame) => void): () => void {
    return this.#listeners.add(session, listener);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#registryTimer);
    for (const route of this.#routes.values()) route.worker?.detach();
    this.#routes.clear();
    this.#listeners.clear();
    const links = [...this.#links.values()];
    this.#links.clear();
    for (const shared of links) clearTimeout(shared.lostTimer);
    await Promise.all(links.map((entry) => entry.link.close()));
    await this.#options.placement.close();
  }

  async #place(session: string, route: Route, options?: PlaceOptions): Promise<void> {
    let endpoint: WorkerEndpoint;
    try {
      endpoint = await this.#options.placement.place(session, options);
    } catch (cause) {
      this.#routes.delete(session);
      const error = toVenusError(cause, 'model_unavailable');
      this.#deliver({ kind: 'error', session, code: error.code, message: error.message });
      this.#deliver({ kind: 'closed', session, reason: error.code });
      return;
    }
    if (this.#routes.get(session) !== route || this.#closed) {
      this.#options.placement.release(session);
      return;
    }
    const shared = this.#shared(endpoint);
    shared.sessions.add(session);
    const detach = shared.link.onFrame(session, (frame) => {
      if (frame.kind === 'handover') return this.#leave(session, route);
      if (frame.kind === 'closed' && frame.reason === HANDOVER_REASON) return this.#moveFrom(shared, session, 'drain');
      this.#deliver(frame);
      if (frame.kind === 'closed') this.#end(session);
    });
    route.worker = { id: endpoint.id, url: endpoint.url, link: shared.link, detach };
    if (!shared.down) this.#flush(session, route);
  }

  #shared(endpoint: WorkerEndpoint): SharedLink {
    const existing = this.#links.get(endpoint.url);
    if (existing !== undefined) return existing;
    let shared: SharedLink | undefined;
    const link = this.#options.connect(endpoint, (event) => {
      if (shared !== undefined) this.#linkEvent(shared, event);
    });
    shared = { endpoint, link, sessions: new Set(), down: false };
    this.#links.set(endpoint.url, shared);
    return shared;
  }

  /** Sends what waited for the session's worker, in order. */
  #flush(session: string, route: Route): void {
    const worker = route.worker;
    if (worker === undefined) return;
    for (const frame of route.pending.splice(0)) {
      try {
        worker.link.send(frame);
      } catch (cause) {
        const error = toVenusError(cause, 'model_unavailable');
        this.#deliver({ kind: 'error', session, code: error.code, message: error.message });
      }
      if (frame.kind === 'close') {
        this.#end(session);
        return;
      }
    }
  }

  #linkEvent(shared: SharedLink, event: RelayLinkEvent): void {
    if (this.#links.get(shared.endpoint.url) !== shared) return;
    if (event.type === 'disconnected' || (event.type === 'connect_failed' && shared.down)) {
      shared.down = true;
      // Nothing listens at its address any more (the process is gone, not a network blip): move
      // its sessions now rather than after the grace.
      if (event.type === 'connect_failed' && refusedOutright(event.error)) {
        clearTimeout(shared.lostTimer);
        this.#failover(shared);
        return;
      }
      shared.lostTimer ??= setTimeout(() => this.#failover(shared), this.#graceMs);
      return;
    }
    if (event.type === 'connected' && shared.down) {
      // Back within the grace: its sessions were re-opened on it by the link; what waited follows.
      shared.down = false;
      clearTimeout(shared.lostTimer);
      shared.lostTimer = undefined;
      for (const session of shared.sessions) {
        const route = this.#routes.get(session);
        if (route !== undefined) this.#flush(session, route);
      }
    }
  }

  /** The worker stayed away: each of its sessions goes to another worker with its latest `open`. */
  #failover(shared: SharedLink): void {
    if (this.#links.get(shared.endpoint.url) !== shared || this.#closed) return;
    for (const session of [...shared.sessions]) this.#moveFrom(shared, session, 'worker_lost');
    this.#links.delete(shared.endpoint.url);
    void shared.link.close();
  }

  /**
   * The worker hands the session over (it drains): from here its input waits in `pending`, and the
   * `close` with HANDOVER_REASON, the last frame the worker gets for it, says so; the worker stores
   * what it has and answers `closed` with that reason, which moves the session (`#moveFrom`).
   */
  #leave(session: string, route: Route): void {
    const worker = route.worker;
    if (worker === undefined || route.leaving) return;
    route.leaving = true;
    try {
      worker.link.send({ kind: 'close', session, reason: HANDOVER_REASON });
    } catch {
      // The link is closed: its relay going down fails the session over instead.
    }
  }

  /** Moves one session off `shared`'s worker to another one (never that worker), with its latest `open`. */
  #moveFrom(shared: SharedLink, session: string, reason: FailoverEvent['reason']): void {
    const route = this.#routes.get(session);
    shared.sessions.delete(session);
    if (route === undefined || this.#closed) return;
    route.worker?.detach();
    route.worker = undefined;
    route.leaving = false;
    this.#options.placement.release(session);
    route.pending.unshift(route.open);
    const from = shared.endpoint.id;
    this.#options.onFailover?.({ session, from, reason });
    // Its transport learns why (`venus.session.resumed` carries it) before the new worker's frames.
    this.#deliver({ kind: 'handover', session, reason: reason === 'drain' ? 'draining' : 'worker_lost' });
    void this.#place(session, route, { exclude: [from] });
    if (reason === 'drain' && shared.sessions.size === 0 && this.#links.get(shared.endpoint.url) === shared) {
      this.#links.delete(shared.endpoint.url);
      clearTimeout(shared.lostTimer);
      void shared.link.close();
    }
  }

  #end(session: string): void {
    const route = this.#routes.get(session);
    if (route === undefined) return;
    this.#routes.delete(session);
    this.#options.placement.release(session);
    const worker = route.worker;
    if (worker === undefined) return;
    worker.detach();
    const shared = this.#links.get(worker.url);
    if (shared === undefined) return;
    shared.sessions.delete(session);
    if (shared.sessions.size > 0) return;
    this.#links.delete(worker.url);
    clearTimeout(shared.lostTimer);
    void shared.link.close();
  }

  #deliver(frame: WorkerToEdgeFrame): void {
    this.#listeners.deliver(frame);
  }

  #deliverLater(frame: WorkerToEdgeFrame): void {
    queueMicrotask(() => this.#deliver(frame));
  }
}

/** The connection was refused at the worker's address (ECONNREFUSED anywhere in the cause chain). */
function refusedOutright(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if ((e as NodeJS.ErrnoException).code === 'ECONNREFUSED') return true;
  }
  return false;
}
