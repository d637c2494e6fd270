/**
 * Published figures we set ours beside. Sources: the Realtime-Venus paper (arXiv 2609.13814) for
 * its Audio model on Full-Duplex-Bench v1.5, and the Full-Duplex-Bench v1.0 results table (its
 * repository's README) for the peers' latencies and turn-over rates.
 */
export const PAPER_V15 = {
  model: 'Realtime-Venus-Audio (paper)',
  respondToInterruptions: 0.75,
  continueBackchannel: 0.97,
  continueOtherDirected: 0.88,
  continueBackground: 0.86,
  commercial: { 'Gemini 3.1 Live': 0.77, 'GPT-4o': 0.78 },
} as const;

export interface PeerV1 {
  model: string;
  /** Response latency after a user interruption (s). */
  interruptionLatencyS: number;
  /** Response latency on smooth turn-taking (s). */
  turnTakingLatencyS: number;
  /** Turn-over rate in synthetic pause handling (lower is better). */
  pauseTor: number;
  /** Turn-over rate on smooth turn-taking (Candor; higher is better). */
  turnTakingTor: number;
}

export const PEERS_V1: readonly PeerV1[] = [
  { model: 'GPT-Realtime', interruptionLatencyS: 1.5, turnTakingLatencyS: 1.47, pauseTor: 0.01, turnTakingTor: 1.0 },
  {
    model: 'Gemini Live 2.0',
    interruptionLatencyS: 1.18,
    turnTakingLatencyS: 1.3,
    pauseTor: 0.255,
    turnTakingTor: 0.655,
  },
  { model: 'Freeze-Omni', interruptionLatencyS: 1.41, turnTakingLatencyS: 0.95, pauseTor: 0.642, turnTakingTor: 0.336 },
  { model: 'Moshi', interruptionLatencyS: 0.26, turnTakingLatencyS: 0.27, pauseTor: 0.985, turnTakingTor: 0.941 },
];
