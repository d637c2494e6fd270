import type { EdgeToWorkerFrame, TimelineDraft, TimelineEvent, WorkerLink, WorkerToEdgeFrame } from '@venus/protocol';

/**
 * FAKE WorkerLink for the edge's unit tests: records every frame the edge sends and lets a test
 * play the worker by pushing frames (or timeline events, stamped with increasing seqs) back.
 */
export class FakeWorkerLink implements WorkerLink {
  readonly frames: EdgeToWorkerFrame[] = [];
  readonly #listeners = new Map<string, Set<(frame: WorkerToEdgeFrame) => void>>();
  readonly #waiters = new Set<(frame: EdgeToWorkerFrame) => void>();
  #seq = 0;
  closed = false;

  send(frame: EdgeToWorkerFrame): void {
    this.frames.push(frame);
    for (const waiter of [...this.#waiters]) waiter(frame);
  }

  /** The first frame of `kind` the edge sent, or the next one it sends: an event to wait for, not a timer. */
  sent<K extends EdgeToWorkerFrame['kind']>(kind: K): Promise<Extract<EdgeToWorkerFrame, { kind: K }>> {
    type Frame = Extract<EdgeToWorkerFrame, { kind: K }>;
    const already = this.framesOf(kind)[0];
    if (already) return Promise.resolve(already);
    return new Promise<Frame>((resolve) => {
      const waiter = (frame: EdgeToWorkerFrame) => {
        if (frame.kind !== kind) return;
        this.#waiters.delete(waiter);
        resolve(frame as Frame);
      };
      this.#waiters.add(waiter);
    });
  }

  onFrame(session: string, listener: (frame: WorkerToEdgeFrame) => void): () => void {
    let set = this.#listeners.get(session);
    if (set === undefined) {
      set = new Set();
      this.#listeners.set(session, set);
    }
    set.add(listener);
    return () => set.delete(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  push(frame: WorkerToEdgeFrame): void {
    for (const listener of [...(this.#listeners.get(frame.session) ?? [])]) listener(frame);
  }

  /** Pushes a timeline event as the session host would stamp it. */
  pushTimeline(session: string, draft: TimelineDraft, atMs = this.#seq * 10): TimelineEvent {
    this.#seq += 1;
    const event = { ...draft, session, seq: this.#seq, chunk: Math.floor(atMs / 1000), atMs } as TimelineEvent;
    this.push({ kind: 'timeline', session, event });
    return event;
  }

  /**
   * Pushes the samples of an assistant audio chunk as the session host sends them: an
   * `assistant_audio` frame, right before the chunk's `assistant.audio` event (push that next).
   */
  pushAudioSamples(session: string, chunk: { utteranceId: string; audioChunkSeq: number }, pcm24k: Int16Array): void {
    const bytes = new Uint8Array(pcm24k.buffer as ArrayBuffer, pcm24k.byteOffset, pcm24k.byteLength);
    this.push({ kind: 'assistant_audio', session, ...chunk, pcm24k: bytes });
  }

  listenerCount(session: string): number {
    return this.#listeners.get(session)?.size ?? 0;
  }

  framesOf<K extends EdgeToWorkerFrame['kind']>(kind: K): Extract<EdgeToWorkerFrame, { kind: K }>[] {
    return this.frames.filter((frame): frame is Extract<EdgeToWorkerFrame, { kind: K }> => frame.kind === kind);
  }
}
