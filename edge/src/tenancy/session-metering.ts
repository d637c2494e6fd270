import type { TimelineEvent } from '@venus/protocol';
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
}

/**
 * One session's accounting: input audio against the tenant's audio budget and into its usage,
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

  admitAudioIn(ms: number): AudioAdmission {
    const { tenant, quotas, meter } = this.#options;
    const admitted = quotas.admitAudioIn(tenant, ms);
    if (admitted.ok) {
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
  }
}
