/** Options every built-in takes: simulated remote latency, so the dual loop has work that takes a while. */
export interface BuiltinOptions {
  /** Milliseconds each call waits before answering (abortable). */
  latencyMs?: number;
}
