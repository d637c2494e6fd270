import type { Admission, TimelineEvent, TokenBucket } from '@venus/protocol';
import type { FleetQuotas } from './fleet-quotas.ts';
import type { AudioAdmission, SessionHooks } from './session-hooks.ts';
import type { TenantQuotas } from './tenant-quotas.ts';
import type { UsageMeter } from './usage-meter.ts';

export interface SessionMeteringOptions {
  tenant: string;
  sessionId: string;
  quotas: TenantQuotas;
  meter: UsageMeter;
  /** Fleet-wide slots: the session's is given back when it ends. */
  fleet?: FleetQuotas;
  /** This session's own input budget in audio ms (inputAudioBucket); none: only the tenant's limits. */
  inputAudio?: TokenBucket;
  /** Called once when the session ends, after its slots are given back. */
  onEnded?: () => void;
}

/**
 * One session's accounting: input audio against the session's own budget, then the tenant's, and
 * into its usage,
 * output audio, delegations and function run time read off the timeline the edge relays, and the
 * session's slot given back when it ends. Function time is the session clock between a work item
 * entering RUNNING and leaving it (each retry counted).
 *
 * @example
 *   const hooks = new SessionMetering({ tenant, sessionId, quotas, meter });
 *   new RealtimeConnection({ ...options, hooks });
 */
export class SessionMetering implements SessionHooks {
  readonly #options: SessionMeteringOptions;
  /** Work items now RUNNING, with the session time they started. */
  readonly #running = new Map<string, number>();
  #refusing = false;
  #ended = false;

  constructor(options: SessionMeteringOptions) {
    this.#options = options;
  }

  /**
   * Audio over a budget is dropped, never queued: queueing would hold it in this process, and
   * relaying it would make the worker hold it and spend its chunk deadlines on it.
   */
  admitAudioIn(ms: number): AudioAdmission {
    const { tenant, quotas, meter, inputAudio } = this.#options;
    // Peek first: audio the tenant then refuses must not use up the session's budget.
    const admitted = inputAudio?.peek(ms) === false ? sessionRefusal(inputAudio, ms) : quotas.admitAudioIn(tenant, ms);
    if (admitted.ok) {
      inputAudio?.take(ms);
      this.#refusing = false;
      meter.add(tenant, { audioInMs: ms });
      return admitted;
    }
    // One error per run of refused appends: a client streams 50 of them a second.
    if (this.#refusing) return { ok: false };
    this.#refusing = true;
    const retry = Math.ceil(admitted.retryAfterMs / 1000);
    return {
      ok: false,
      error: { code: 'rate_limited', message: `${admitted.message}: input audio dropped; retry in ${retry} s` },
    };
  }

  observe(event: TimelineEvent): void {
    const { tenant, meter } = this.#options;
    switch (event.type) {
      case 'assistant.audio':
        meter.add(tenant, { audioOutMs: event.data.durationMs });
        return;
      case 'assistant.delegate':
        meter.add(tenant, { delegations: 1 });
        return;
      case 'work.state': {
        const { workId, state } = event.data;
        const started = this.#running.get(workId);
        if (started !== undefined) {
          this.#running.delete(workId);
          meter.add(tenant, { functionMs: Math.max(0, event.atMs - started) });
        }
        if (state === 'RUNNING') this.#running.set(workId, event.atMs);
        return;
      }
      default:
        return;
    }
  }

  ended(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#options.quotas.closeSession(this.#options.sessionId);
    this.#options.fleet?.releaseSession(this.#options.sessionId);
    this.#options.onEnded?.();
  }
}

function sessionRefusal(bucket: TokenBucket, ms: number): Extract<Admission, { ok: false }> {
  const refused = bucket.take(ms);
  const retryAfterMs = refused.ok ? 0 : refused.retryAfterMs;
  return { ok: false, retryAfterMs, message: `session input audio over real time plus its burst (${ms} ms sent)` };
}
