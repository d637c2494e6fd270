import { SessionListeners } from '@venus/edge';
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
  private readonly listeners = new SessionListeners();
  private readonly detach: () => void;

  constructor(private readonly worker: FrameHandler) {
    this.detach = worker.onFrame((frame) => {
      if (!this.listeners.has(frame.session)) return;
      queueMicrotask(() => this.listeners.deliver(frame));
    });
  }

  send(frame: EdgeToWorkerFrame): void {
    queueMicrotask(() => this.worker.handleFrame(frame));
  }

  onFrame(session: string, listener: (frame: WorkerToEdgeFrame) => void): () => void {
    return this.listeners.add(session, listener);
  }

  async close(): Promise<void> {
    this.detach();
    this.listeners.clear();
  }
}
