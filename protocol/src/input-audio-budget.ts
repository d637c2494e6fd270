import { TokenBucket } from './token-bucket.ts';

/**
 * How much input audio one session may send: `rate` ms of audio per ms of wall time (1 is real
 * time) on top of a `burstMs` reserve. A client that streams its microphone never notices; one that
 * pushes recorded audio faster than it plays is held to real time once the burst is spent, so one
 * session cannot flood its worker with hours of audio and starve the other sessions' deadlines.
 */
export interface InputAudioBudget {
  rate: number;
  burstMs: number;
}

/**
 * The default: real time plus a 10 s burst. The burst is one largest legal append
 * (`AUDIO.maxAppendBytes`, 10 s of pcm16): a bucket smaller than an append could never admit it.
 */
export const DEFAULT_INPUT_AUDIO_BUDGET: InputAudioBudget = { rate: 1, burstMs: 10_000 };

/** A session's bucket of audio milliseconds on `now` (monotonic ms; tests pass a fake clock's). */
export function inputAudioBucket(budget: InputAudioBudget, now: () => number): TokenBucket {
  return new TokenBucket({ perMinute: budget.rate * 60_000, burst: budget.burstMs }, now);
}

/**
 * The budget a GPU worker holds each session to, behind an edge that enforces `edge`: a quarter
 * faster and one more largest append (10 s) of burst, so audio the edge admitted is never refused
 * for the relay's batching or clock skew, while a relay peer that enforces nothing (a bridge, a
 * buggy or hostile edge) is still held near real time. Audio refused here is not accepted: the
 * session gets a `rate_limited` error and nothing of it reaches the timeline or the model.
 */
export function workerInputAudioBudget(edge: InputAudioBudget = DEFAULT_INPUT_AUDIO_BUDGET): InputAudioBudget {
  return { rate: edge.rate * 1.25, burstMs: edge.burstMs + 10_000 };
}

/** The edge's budget from `VENUS_INPUT_AUDIO_RATE` and `VENUS_INPUT_AUDIO_BURST_MS` (validated by the settings module). */
export function inputAudioBudgetFromEnv(env: Record<string, string | undefined>): InputAudioBudget {
  const rate = env.VENUS_INPUT_AUDIO_RATE;
  const burst = env.VENUS_INPUT_AUDIO_BURST_MS;
  return {
    rate: rate ? Number(rate) : DEFAULT_INPUT_AUDIO_BUDGET.rate,
    burstMs: burst ? Number(burst) : DEFAULT_INPUT_AUDIO_BUDGET.burstMs,
  };
}
