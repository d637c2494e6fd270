import type { Admission } from '@venus/protocol';
import { DEFAULT_INPUT_AUDIO_BUDGET, type InputAudioBudget, inputAudioBucket } from '@venus/protocol';
import type { FleetQuotas } from './fleet-quotas.ts';
import { SessionMetering } from './session-metering.ts';
import type { LimitsConfig } from './tenant-limits.ts';
import { TenantQuotas } from './tenant-quotas.ts';
import { InMemoryUsageMeter, type UsageMeter } from './usage-meter.ts';

export interface TenancyOptions {
  limits?: LimitsConfig;
  /** Where usage is counted; in memory by default (a RedisUsageMeter for a fleet). */
  meter?: UsageMeter;
  /** Limits counted across every edge (Redis); without it each edge counts alone. */
  fleet?: FleetQuotas;
  /** Monotonic milliseconds for the rate limits (tests pass a fake). */
  now?: () => number;
  /** Each session's own input audio budget; by default real time plus a 10 s burst. */
  inputAudio?: InputAudioBudget;
}

/** The edge's per-tenant admission (quotas, and fleet-wide ones when set) and accounting (meter). */
export interface Tenancy {
  quotas: TenantQuotas;
  meter: UsageMeter;
  fleet?: FleetQuotas;
  /** Each session's input audio budget, on the clock `now`. */
  inputAudio: InputAudioBudget;
  now: () => number;
}

export function createTenancy(options: TenancyOptions = {}): Tenancy {
  return {
    quotas: new TenantQuotas({
      ...(options.limits === undefined ? {} : { limits: options.limits }),
      ...(options.now === undefined ? {} : { now: options.now }),
    }),
    meter: options.meter ?? new InMemoryUsageMeter(),
    inputAudio: options.inputAudio ?? DEFAULT_INPUT_AUDIO_BUDGET,
    now: options.now ?? (() => performance.now()),
    ...(options.fleet === undefined ? {} : { fleet: options.fleet }),
  };
}

/** An authenticated request against this edge's request rate, then the fleet's. */
export async function admitRequest(tenancy: Tenancy, tenant: string): Promise<Admission> {
  const local = tenancy.quotas.admitRequest(tenant);
  if (!local.ok || tenancy.fleet === undefined) return local;
  return tenancy.fleet.admitRequest(tenant, tenancy.quotas.limitsFor(tenant));
}

/**
 * A session slot at the upgrade: this edge's own counts first, then the fleet's. A fleet refusal
 * gives the local reservation back, so the two never disagree about a slot.
 */
export async function reserveSessionSlot(
  tenancy: Tenancy,
  tenant: string,
): Promise<({ ok: true; ticket: string } & Admission) | Extract<Admission, { ok: false }>> {
  const local = tenancy.quotas.reserveSession(tenant);
  if (!local.ok || tenancy.fleet === undefined) return local;
  const fleet = await tenancy.fleet.reserveSession(tenant, local.ticket, tenancy.quotas.limitsFor(tenant));
  if (fleet.ok) return local;
  tenancy.quotas.cancelReservation(tenant, local.ticket);
  return fleet;
}

/**
 * One session's accounting on this tenancy: its quotas, usage meter, fleet slot and its own input
 * audio budget. Every transport that opens sessions on the edge (realtime sockets, phone calls)
 * meters them with this.
 */
export function meterSession(
  tenancy: Tenancy,
  tenant: string,
  sessionId: string,
  onEnded: () => void,
): SessionMetering {
  return new SessionMetering({
    tenant,
    sessionId,
    quotas: tenancy.quotas,
    meter: tenancy.meter,
    ...(tenancy.fleet === undefined ? {} : { fleet: tenancy.fleet }),
    inputAudio: inputAudioBucket(tenancy.inputAudio, tenancy.now),
    onEnded,
  });
}
