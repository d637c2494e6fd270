import type { EdgeToWorkerFrame, WorkerLink, WorkerToEdgeFrame } from '@venus/protocol';

/** The worker side as the in-process link sees it: the session host's two frame methods. */
export interface FrameHandler {
  handleFrame(frame: unknown): void;
  onFrame(listener: (frame: WorkerToEdgeFrame) => void): () => void;
}

/**
 * Edge <-> worker relay inside one process (the embedded default). Frames are the same objects that
 * travel as msgpack between machines; delivery is deferred to a microtask so neither side ever
 * re-enters the other's handler, as on a real link.
 */
export class InProcessLink implements WorkerLink {
  private readonly listeners = new Map<string, Set<(frame: WorkerToEdgeFrame) => void>>();
  private readonly detach: () => void;

  constructor(private readonly worker: FrameHandler) {
    this.detach = worker.onFrame((frame) => {
      const set = this.listeners.get(frame.session);
      if (!set) return;
      queueMicrotask(() => {
        for (const l of set) l(frame);
      });
    });
  }

  send(frame: EdgeToWorkerFrame): void {
    queueMicrotask(() => this.worker.handleFrame(frame));
  }

  onFrame(session: string, listener: (frame: WorkerToEdgeFrame) => void): () => void {
    let set = this.listeners.get(session);
    if (!set) {
      set = new Set();
      this.listeners.set(session, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(session);
    };
  }

  async close(): Promise<void> {
    this.detach();
    this.listeners.clear();
  }
}
