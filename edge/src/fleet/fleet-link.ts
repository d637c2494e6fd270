import { type EdgeToWorkerFrame, toVenusError, type WorkerLink, type WorkerToEdgeFrame } from '@venus/protocol';
import { SessionListeners } from '../relay/session-listeners.ts';
import type { WorkerEndpoint, WorkerPlacement } from './worker-placement.ts';

export interface FleetWorkerLinkOptions {
  placement: WorkerPlacement;
  /** Opens the link to one worker (on Node, a WebSocketWorkerLink). */
  connect(endpoint: WorkerEndpoint): WorkerLink;
  /** Frames a session may send while its worker is being chosen. Default 512. */
  maxPendingFrames?: number;
}

interface Route {
  pending: EdgeToWorkerFrame[];
  worker?: { url: string; link: WorkerLink; detach: () => void };
}

/**
 * A WorkerLink over a fleet of GPU workers: each session's `open` asks the placement for a worker,
 * and the session sticks to it for its life. Frames sent while the choice is being made wait (bounded)
 * and follow in order. One link per worker is shared by all its sessions and closed when the last ends.
 *
 * @example
 *   const link = new FleetWorkerLink({
 *     placement: new RedisPlacement({ url: process.env.REDIS_URL! }),
 *     connect: (worker) => new WebSocketWorkerLink({ url: worker.url, token }),
 *   });
 *   await serveEdgeNode({ link, port: 8080 });
 */
export class FleetWorkerLink implements WorkerLink {
  readonly #options: FleetWorkerLinkOptions;
  readonly #maxPending: number;
  readonly #routes = new Map<string, Route>();
  readonly #links = new Map<string, { link: WorkerLink; sessions: number }>();
  readonly #listeners = new SessionListeners();

  constructor(options: FleetWorkerLinkOptions) {
    this.#options = options;
    this.#maxPending = options.maxPendingFrames ?? 512;
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
        const fresh: Route = { pending: [frame] };
        this.#routes.set(session, fresh);
        void this.#place(session, fresh);
      } else if (frame.kind !== 'close') {
        const message = `session ${session} is not open on this edge`;
        this.#deliverLater({ kind: 'error', session, code: 'wrong_session', message });
      }
      return;
    }
    if (route.worker !== undefined) {
      route.worker.link.send(frame);
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
    for (const route of this.#routes.values()) route.worker?.detach();
    this.#routes.clear();
    this.#listeners.clear();
    const links = [...this.#links.values()];
    this.#links.clear();
    await Promise.all(links.map((entry) => entry.link.close()));
    await this.#options.placement.close();
  }

  async #place(session: string, route: Route): Promise<void> {
    let endpoint: WorkerEndpoint;
    try {
      endpoint = await this.#options.placement.place(session);
    } catch (cause) {
      this.#routes.delete(session);
      const error = toVenusError(cause, 'model_unavailable');
      this.#deliver({ kind: 'error', session, code: error.code, message: error.message });
      this.#deliver({ kind: 'closed', session, reason: error.code });
      return;
    }
    if (this.#routes.get(session) !== route) {
      this.#options.placement.release(session);
      return;
    }
    let shared = this.#links.get(endpoint.url);
    if (shared === undefined) {
      shared = { link: this.#options.connect(endpoint), sessions: 0 };
      this.#links.set(endpoint.url, shared);
    }
    shared.sessions += 1;
    const detach = shared.link.onFrame(session, (frame) => {
      this.#deliver(frame);
      if (frame.kind === 'closed') this.#end(session);
    });
    route.worker = { url: endpoint.url, link: shared.link, detach };
    const pending = route.pending.splice(0);
    for (const frame of pending) {
      try {
        shared.link.send(frame);
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
    shared.sessions -= 1;
    if (shared.sessions > 0) return;
    this.#links.delete(worker.url);
    void shared.link.close();
  }

  #deliver(frame: WorkerToEdgeFrame): void {
    this.#listeners.deliver(frame);
  }

  #deliverLater(frame: WorkerToEdgeFrame): void {
    queueMicrotask(() => this.#deliver(frame));
  }
}
