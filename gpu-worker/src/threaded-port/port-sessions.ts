import { type OpenSessionRequest, VenusError } from '@venus/protocol';
import { type SessionOwner, type SessionThread, ThreadSessionHandle } from './thread-session-handle.ts';

/** A port's capacity as the open check sees it. */
export interface PortCapacity {
  maxSessions: number;
  /** Sessions open on the port's live threads now. */
  open: number;
  /** How the capacity error names the model, e.g. "the cascade model". */
  name: string;
}

/**
 * The sessions one thread-backed port has open (the reference model, the cascade, the ONNX
 * bundle): a reopen must carry a newer incarnation and supersedes the old handle, capacity is
 * checked before a thread is asked, each session gets its own handle number on its thread, and a
 * closed handle is forgotten.
 *
 * @example
 *   const table = new PortSessions();
 *   const session = await table.open(request, { maxSessions, open, name: 'the bundle' }, this, async (handle) => {
 *     const link = await pool.pick();
 *     await link.call({ t: 'open', id: link.nextId(), handle, sessionId: request.sessionId, incarnation: request.incarnation });
 *     return link;
 *   });
 */
export class PortSessions {
  readonly #sessions = new Map<string, ThreadSessionHandle>();
  #handles = 0;

  /** Opens a session through `start` (which opens it on a thread under `handle` and returns that thread). */
  async open(
    request: OpenSessionRequest,
    capacity: PortCapacity,
    owner: SessionOwner,
    start: (handle: number) => Promise<SessionThread>,
  ): Promise<ThreadSessionHandle> {
    const existing = this.#sessions.get(request.sessionId);
    if (existing?.isOpen && request.incarnation <= existing.incarnation) {
      throw new VenusError(
        'stale_incarnation',
        `session ${request.sessionId} is open at incarnation ${existing.incarnation}; ${request.incarnation} is not newer`,
      );
    }
    existing?.supersede();
    if (capacity.open >= capacity.maxSessions) {
      throw new VenusError('model_unavailable', `${capacity.name} is at capacity (${capacity.maxSessions} sessions)`);
    }
    const handle = ++this.#handles;
    const link = await start(handle);
    const session = new ThreadSessionHandle(request.sessionId, request.incarnation, handle, link, owner);
    link.sessions += 1;
    this.#sessions.set(request.sessionId, session);
    return session;
  }

  released(session: ThreadSessionHandle): void {
    if (this.#sessions.get(session.sessionId) === session) this.#sessions.delete(session.sessionId);
  }

  clear(): void {
    this.#sessions.clear();
  }
}
