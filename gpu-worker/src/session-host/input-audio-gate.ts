import { type InputAudioBudget, inputAudioBucket, type TokenBucket, workerInputAudioBudget } from '@venus/protocol';

/** At most one `rate_limited` report per this interval: one report covers a flood. */
const REPORT_INTERVAL_MS = 1_000;

export type GateVerdict = { ok: true } | { ok: false; report: string | null };

/**
 * The worker's own hold on one session's input audio (issue 15: the worker had none, so a relay
 * peer that enforces nothing could queue minutes of audio in the shared perception threads ahead of
 * every other session). Audio past the budget is refused before it is accepted: it never reaches
 * the timeline, the media store or the model. Refusals are summed and reported at most once a
 * second, so a flood makes one `session.error` a second rather than one per frame.
 *
 * @example
 *   const gate = new InputAudioGate(workerInputAudioBudget(), performance.now.bind(performance));
 *   const v = gate.admit(20);
 *   if (!v.ok && v.report) writer.error('rate_limited', v.report, 'audio');
 */
export class InputAudioGate {
  readonly #bucket: TokenBucket;
  readonly #budget: InputAudioBudget;
  readonly #now: () => number;
  #refusedMs = 0;
  #refusedFrames = 0;
  #reportedAt = Number.NEGATIVE_INFINITY;

  constructor(budget: InputAudioBudget = workerInputAudioBudget(), now: () => number = () => performance.now()) {
    this.#budget = budget;
    this.#now = now;
    this.#bucket = inputAudioBucket(budget, now);
  }

  /** Charges `durationMs` of audio, or refuses it and says (at most once a second) how much was refused. */
  admit(durationMs: number): GateVerdict {
    if (this.#bucket.take(durationMs).ok) return { ok: true };
    this.#refusedMs += durationMs;
    this.#refusedFrames += 1;
    const at = this.#now();
    if (at - this.#reportedAt < REPORT_INTERVAL_MS) return { ok: false, report: null };
    const report =
      `input audio arrives faster than ${this.#budget.rate}x real time past a ${this.#budget.burstMs} ms burst: ` +
      `${Math.round(this.#refusedMs)} ms in ${this.#refusedFrames} frame(s) refused (not recorded, not heard)`;
    this.#reportedAt = at;
    this.#refusedMs = 0;
    this.#refusedFrames = 0;
    return { ok: false, report };
  }
}
