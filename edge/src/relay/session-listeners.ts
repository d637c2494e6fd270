import { createLogger, type WorkerToEdgeFrame } from '@venus/protocol';

const log = createLogger('edge.relay');

type Listener = (frame: WorkerToEdgeFrame) => void;

/**
 * Who listens to which session's frames on a worker link (the relay link, the fleet link, the
 * in-process link). Delivery works on a snapshot, so a listener may unsubscribe while it runs, and a
 * listener that throws does not keep the frame from the others.
 *
 * @example
 *   const listeners = new SessionListeners();
 *   const off = listeners.add('sess_1', (frame) => console.log(frame.kind));
 *   listeners.deliver({ kind: 'closed', session: 'sess_1', reason: 'done' });
 *   off();
 */
export class SessionListeners {
  readonly #bySession = new Map<string, Set<Listener>>();

  /** Adds a listener; the returned function removes it. */
  add(session: string, listener: Listener): () => void {
    let set = this.#bySession.get(session);
    if (set === undefined) {
      set = new Set();
      this.#bySession.set(session, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.#bySession.get(session) === set) this.#bySession.delete(session);
    };
  }

  has(session: string): boolean {
    return this.#bySession.has(session);
  }

  deliver(frame: WorkerToEdgeFrame): void {
    const set = this.#bySession.get(frame.session);
    if (set === undefined) return;
    for (const listener of [...set]) {
      try {
        listener(frame);
      } catch (error) {
        // One session's failing listener must not stop the others on this link, but it is a defect.
        log.error({ err: error, session: frame.session, kind: frame.kind }, 'relay frame listener threw');
      }
    }
  }

  clear(): void {
    this.#bySession.clear();
  }
}
