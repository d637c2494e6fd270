/** A GPU worker an edge can send a session to. */
export interface WorkerEndpoint {
  id: string;
  /** Its relay, ws(s)://host:port/relay. */
  url: string;
}

/**
 * Chooses the GPU worker for each new session. Implementations: a static list (`VENUS_WORKERS`) and
 * the Redis fleet registry that workers heartbeat into.
 */
export interface WorkerPlacement {
  /**
   * A live worker with room for one more session; rejects with `model_unavailable` when none has.
   * `exclude`: worker ids not to choose (one just lost, whose registration may not have expired yet).
   */
  place(session: string, options?: PlaceOptions): Promise<WorkerEndpoint>;
  /** The session has ended. */
  release(session: string): void;
  /**
   * Of these worker ids, the ones whose registration is live right now (heartbeat not expired).
   * Rejects when the registry cannot be read: that says nothing about the workers. Absent where
   * there is no registry (a static list): workers are then lost only by their relay.
   */
  registered?(ids: readonly string[]): Promise<ReadonlySet<string>>;
  close(): Promise<void>;
}

export interface PlaceOptions {
  exclude?: readonly string[];
}
