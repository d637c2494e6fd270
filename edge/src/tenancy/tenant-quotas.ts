import { type Admission, type BucketLimit, TokenBucket } from '@venus/protocol';
import { randomId } from '../realtime/ids.ts';
import { type LimitsConfig, limitsOf, type TenantLimits } from './tenant-limits.ts';

export interface TenantQuotasOptions {
  limits?: LimitsConfig;
  /** Monotonic milliseconds (tests pass a fake). */
  now?: () => number;
  /** How long a slot reserved at the upgrade waits for its socket to open. */
  reservationMs?: number;
}

/** When a full tenant should try again: a session ending is not predictable, so a fixed pause. */
const CONCURRENCY_RETRY_MS = 5000;

interface TenantState {
  limits: TenantLimits;
  buckets: Map<'requests' | 'sessions' | 'audioIn', TokenBucket>;
  live: Set<string>;
  /** Slots taken at the upgrade whose sockets have not opened yet, with their deadlines. */
  reserved: Map<string, number>;
}

/**
 * Per-tenant admission on this edge: token buckets on requests, session starts and input audio,
 * a cap on concurrent sessions, and the registry of which tenant owns which live session (so no
 * request can reach another tenant's session).
 *
 * A session's slot is reserved when its upgrade request is admitted and bound when its socket
 * opens; a reservation whose socket never opens lapses, so a failed handshake leaks no slot.
 * Counts are per edge process; FleetQuotas adds the fleet-wide check on top (tenancy.ts).
 *
 * @example
 *   const quotas = new TenantQuotas({ limits: { default: { maxConcurrentSessions: 10 } } });
 *   const reserved = quotas.reserveSession('acme');
 *   if (reserved.ok) quotas.openSession('acme', 'sess_1', reserved.ticket);
 */
export class TenantQuotas {
  readonly #config: LimitsConfig;
  readonly #now: () => number;
  readonly #reservationMs: number;
  readonly #tenants = new Map<string, TenantState>();
  readonly #owners = new Map<string, string>();

  constructor(options: TenantQuotasOptions = {}) {
    this.#config = options.limits ?? {};
    this.#now = options.now ?? (() => performance.now());
    this.#reservationMs = options.reservationMs ?? 15_000;
  }

  admitRequest(tenant: string): Admission {
    return this.#take(tenant, 'requests', 1, 'requests');
  }

  /** At the upgrade: room for one more session, and a session start in the bucket. */
  reserveSession(tenant: string): ({ ok: true; ticket: string } & Admission) | Extract<Admission, { ok: false }> {
    const state = this.#state(tenant);
    const room = this.#room(tenant, state);
    if (!room.ok) return room;
    const started = this.#take(tenant, 'sessions', 1, 'session starts');
    if (!started.ok) return started;
    const ticket = randomId('slot');
    state.reserved.set(ticket, this.#now() + this.#reservationMs);
    return { ok: true, ticket };
  }

  /** Gives back a slot reserved at the upgrade that will not be used (the fleet said no). */
  cancelReservation(tenant: string, ticket: string): void {
    this.#tenants.get(tenant)?.reserved.delete(ticket);
  }

  /** The limits that apply to a tenant (the fleet-wide check uses the same). */
  limitsFor(tenant: string): TenantLimits {
    return this.#state(tenant).limits;
  }

  /** The socket is open: bind the reserved slot (or, with none, take one if there is room). */
  openSession(tenant: string, sessionId: string, ticket?: string): Admission {
    const state = this.#state(tenant);
    if (ticket === undefined || !state.reserved.delete(ticket)) {
      const room = this.#room(tenant, state);
      if (!room.ok) return room;
    }
    state.live.add(sessionId);
    this.#owners.set(sessionId, tenant);
    return { ok: true };
  }

  closeSession(sessionId: string): void {
    const tenant = this.#owners.get(sessionId);
    if (tenant === undefined) return;
    this.#owners.delete(sessionId);
    this.#tenants.get(tenant)?.live.delete(sessionId);
  }

  /** The tenant a live session on this edge belongs to. */
  ownerOf(sessionId: string): string | undefined {
    return this.#owners.get(sessionId);
  }

  liveSessions(tenant: string): number {
    return this.#tenants.get(tenant)?.live.size ?? 0;
  }

  /** Input audio against the tenant's audio budget (seconds per minute, burst in seconds). */
  admitAudioIn(tenant: string, ms: number): Admission {
    return this.#take(tenant, 'audioIn', ms / 1000, 'input audio');
  }

  #room(tenant: string, state: TenantState): Admission {
    const max = state.limits.maxConcurrentSessions;
    if (max === undefined) return { ok: true };
    const now = this.#now();
    for (const [ticket, deadline] of state.reserved) if (deadline <= now) state.reserved.delete(ticket);
    if (state.live.size + state.reserved.size < max) return { ok: true };
    return {
      ok: false,
      retryAfterMs: CONCURRENCY_RETRY_MS,
      message: `tenant ${tenant} has ${max} concurrent sessions, its limit`,
    };
  }

  #take(tenant: string, kind: 'requests' | 'sessions' | 'audioIn', n: number, what: string): Admission {
    const state = this.#state(tenant);
    const limit: BucketLimit | undefined = state.limits[kind];
    if (limit === undefined) return { ok: true };
    let bucket = state.buckets.get(kind);
    if (bucket === undefined) {
      bucket = new TokenBucket(limit, this.#now);
      state.buckets.set(kind, bucket);
    }
    const taken = bucket.take(n);
    if (taken.ok) return taken;
    const message = `tenant ${tenant} is over its rate of ${what} (${limit.perMinute}/min, burst ${limit.burst})`;
    return { ok: false, retryAfterMs: taken.retryAfterMs, message };
  }

  #state(tenant: string): TenantState {
    let state = this.#tenants.get(tenant);
    if (state === undefined) {
      state = { limits: limitsOf(this.#config, tenant), buckets: new Map(), live: new Set(), reserved: new Map() };
      this.#tenants.set(tenant, state);
    }
    return state;
  }
}
