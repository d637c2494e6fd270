import type { Admission, BucketLimit } from '@venus/protocol';
import { Redis } from 'ioredis';
import type { TenantLimits } from './tenant-limits.ts';

export interface FleetQuotasOptions {
  url?: string;
  /** A connection to share; never closed here. */
  client?: Redis;
  /** Keys are `${prefix}quota:${tenant}:…` (default `venus:`). */
  prefix?: string;
  /** How long a live session's slot outlives its edge's last refresh (default 30 s). */
  leaseMs?: number;
  /** How long a slot reserved at the upgrade waits for its socket (default 15 s). */
  reservationMs?: number;
  /** Redis trouble: admission falls back to this edge's own counts (fail open) and reports here. */
  onError?: (error: unknown) => void;
  /**
   * The clock (ms) of lease expiries and bucket refills. Default: Redis's own (TIME), so every edge
   * agrees; a test passes a fake one to step time instead of waiting for it.
   */
  now?: () => number;
}

/** When a full tenant should try again: a session ending is not predictable, so a fixed pause. */
const CONCURRENCY_RETRY_MS = 5000;

// A token bucket in a hash (tokens, at) on Redis's own clock, so every edge refills it alike.
const TAKE = `
local function take(key, perMinute, burst, n, now)
  local v = redis.call('HMGET', key, 't', 'at')
  local tokens = tonumber(v[1]) or burst
  local at = tonumber(v[2]) or now
  tokens = math.min(burst, tokens + math.max(0, now - at) * perMinute / 60000)
  local ttl = 60000
  if perMinute > 0 then ttl = math.ceil(burst * 60000 / perMinute) + 1000 end
  if tokens >= n then
    redis.call('HSET', key, 't', tostring(tokens - n), 'at', tostring(now))
    redis.call('PEXPIRE', key, ttl)
    return 0
  end
  redis.call('HSET', key, 't', tostring(tokens), 'at', tostring(now))
  redis.call('PEXPIRE', key, ttl)
  if perMinute <= 0 then return 3600000 end
  return math.ceil((math.min(n, burst) - tokens) * 60000 / perMinute)
end
-- The caller's clock when it passes one (>= 0), else Redis's own.
local function clock(given)
  local ms = tonumber(given)
  if ms ~= nil and ms >= 0 then return ms end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`;

/** KEYS: bucket. ARGV: perMinute, burst, now (-1: Redis's clock). Returns 0 (taken) or the retry delay in ms. */
const ADMIT_REQUEST = `${TAKE}
return take(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), 1, clock(ARGV[3]))`;

/**
 * KEYS: slots (sorted set: slot -> expiry ms), session-start bucket. ARGV: slot, max (-1: none),
 * perMinute (-1: none), burst, reservationMs, now (-1: Redis's clock). Returns {1} or {0, retryMs, why}.
 */
const RESERVE = `${TAKE}
local now = clock(ARGV[6])
local max = tonumber(ARGV[2])
if max >= 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  if redis.call('ZCARD', KEYS[1]) >= max then return {0, ${CONCURRENCY_RETRY_MS}, 'full'} end
end
if tonumber(ARGV[3]) >= 0 then
  local retry = take(KEYS[2], tonumber(ARGV[3]), tonumber(ARGV[4]), 1, now)
  if retry > 0 then return {0, retry, 'rate'} end
end
if max >= 0 then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[5]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[5]) * 4)
end
return {1}`;

/**
 * KEYS: slots. ARGV: leaseMs, mode, now (-1: Redis's clock), slot... Sets each slot's expiry to now +
 * lease: `XX` only for slots still there (a refresh must not bring back a slot released meanwhile),
 * `ADD` at binding.
 */
const REFRESH = `${TAKE}
local expiry = clock(ARGV[3]) + tonumber(ARGV[1])
for i = 4, #ARGV do
  if ARGV[2] == 'XX' then redis.call('ZADD', KEYS[1], 'XX', expiry, ARGV[i])
  else redis.call('ZADD', KEYS[1], expiry, ARGV[i]) end
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) * 4)
return 0`;

interface QuotaCommands {
  venusAdmitRequest(bucket: string, perMinute: number, burst: number, now: number): Promise<number>;
  venusReserveSession(
    slots: string,
    bucket: string,
    slot: string,
    max: number,
    perMinute: number,
    burst: number,
    reservationMs: number,
    now: number,
  ): Promise<[number, number?, string?]>;
  venusRefreshSlots(
    slots: string,
    leaseMs: number,
    mode: 'XX' | 'ADD',
    now: number,
    ...slot: string[]
  ): Promise<number>;
}

/**
 * Tenant limits counted across every edge of a fleet, in Redis: the request rate, the session-start
 * rate and concurrent sessions (`maxConcurrentSessions`). A session holds a slot in a sorted set
 * under a lease its edge refreshes, so the slots of an edge that dies lapse by themselves after
 * `leaseMs`. The input-audio budget stays per edge (one check every 20 ms cannot wait on Redis).
 *
 * Each edge still applies its own TenantQuotas first; this is the fleet-wide check after it. When
 * Redis fails, admission falls back to those local counts rather than refuse every tenant.
 *
 * @example
 *   const fleet = new FleetQuotas({ url: process.env.REDIS_URL });
 *   const reserved = await fleet.reserveSession('acme', ticket, limits);
 *   if (reserved.ok) fleet.bindSession('acme', ticket, sessionId);
 *   // when it ends: fleet.releaseSession(sessionId)
 */
export class FleetQuotas {
  readonly #redis: Redis & QuotaCommands;
  readonly #ownsClient: boolean;
  readonly #prefix: string;
  readonly #leaseMs: number;
  readonly #reservationMs: number;
  readonly #onError: (error: unknown) => void;
  /** -1 asks the scripts for Redis's clock. */
  readonly #now: () => number;
  /** Live sessions of this edge: session id -> the tenant and slot it holds. */
  readonly #bound = new Map<string, { tenant: string; slot: string }>();
  readonly #timer: ReturnType<typeof setInterval>;
  #closing: Promise<void> | undefined;

  constructor(options: FleetQuotasOptions) {
    if (options.client === undefined && options.url === undefined)
      throw new Error('FleetQuotas needs a url or a client');
    const redis = options.client ?? new Redis(options.url!, { maxRetriesPerRequest: 2 });
    redis.defineCommand('venusAdmitRequest', { numberOfKeys: 1, lua: ADMIT_REQUEST });
    redis.defineCommand('venusReserveSession', { numberOfKeys: 2, lua: RESERVE });
    redis.defineCommand('venusRefreshSlots', { numberOfKeys: 1, lua: REFRESH });
    this.#redis = redis as Redis & QuotaCommands;
    this.#ownsClient = options.client === undefined;
    this.#onError = options.onError ?? (() => {});
    // Connection trouble goes to onError (ioredis reconnects by itself) instead of the console.
    if (this.#ownsClient) redis.on('error', (error: unknown) => this.#onError(error));
    this.#prefix = options.prefix ?? 'venus:';
    this.#leaseMs = options.leaseMs ?? 30_000;
    this.#reservationMs = options.reservationMs ?? 15_000;
    this.#now = options.now ?? (() => -1);
    this.#timer = setInterval(() => void this.refreshLeases(), Math.max(50, Math.floor(this.#leaseMs / 3)));
    this.#timer.unref?.();
  }

  /** One token of the tenant's fleet-wide request bucket (no limit: admitted without a round trip). */
  async admitRequest(tenant: string, limits: TenantLimits): Promise<Admission> {
    const limit = limits.requests;
    if (limit === undefined) return { ok: true };
    try {
      const retryMs = await this.#redis.venusAdmitRequest(
        this.#key(tenant, 'requests'),
        limit.perMinute,
        limit.burst,
        this.#now(),
      );
      return retryMs > 0 ? refusedRate(tenant, 'requests', limit, retryMs) : { ok: true };
    } catch (error) {
      this.#onError(error);
      return { ok: true };
    }
  }

  /** At the upgrade: a fleet-wide slot and a session start; the slot lapses unless bound in time. */
  async reserveSession(tenant: string, ticket: string, limits: TenantLimits): Promise<Admission> {
    const max = limits.maxConcurrentSessions;
    const starts = limits.sessions;
    if (max === undefined && starts === undefined) return { ok: true };
    try {
      const [ok, retryMs = 0, why] = await this.#redis.venusReserveSession(
        this.#key(tenant, 'slots'),
        this.#key(tenant, 'sessions'),
        ticket,
        max ?? -1,
        starts?.perMinute ?? -1,
        starts?.burst ?? 0,
        this.#reservationMs,
        this.#now(),
      );
      if (ok === 1) return { ok: true };
      if (why === 'full') {
        const message = `tenant ${tenant} has ${max} concurrent sessions across the fleet, its limit`;
        return { ok: false, retryAfterMs: retryMs, message };
      }
      return refusedRate(tenant, 'session starts', starts!, retryMs);
    } catch (error) {
      this.#onError(error);
      return { ok: true };
    }
  }

  /** The socket opened: the reserved slot now lives as long as the session, under the lease. */
  bindSession(tenant: string, ticket: string, sessionId: string): void {
    this.#bound.set(sessionId, { tenant, slot: ticket });
    void this.#refreshSlots(tenant, [ticket], 'ADD');
  }

  /** Gives a reservation back whose socket never opened (or was refused on this edge). */
  releaseReservation(tenant: string, ticket: string): void {
    this.#redis.zrem(this.#key(tenant, 'slots'), ticket).catch(this.#onError);
  }

  releaseSession(sessionId: string): void {
    const held = this.#bound.get(sessionId);
    if (held === undefined) return;
    this.#bound.delete(sessionId);
    this.releaseReservation(held.tenant, held.slot);
  }

  /** Sessions of this edge holding fleet slots. */
  get boundSessions(): number {
    return this.#bound.size;
  }

  /** Stops refreshing (this edge's slots lapse after the lease unless released first). */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      clearInterval(this.#timer);
      if (this.#ownsClient) await this.#redis.quit().catch(() => this.#redis.disconnect());
    })();
    return this.#closing;
  }

  /** Renews the lease of every session bound here (also done every third of `leaseMs`). */
  async refreshLeases(): Promise<void> {
    const byTenant = new Map<string, string[]>();
    for (const { tenant, slot } of this.#bound.values()) {
      const slots = byTenant.get(tenant);
      if (slots === undefined) byTenant.set(tenant, [slot]);
      else slots.push(slot);
    }
    await Promise.all([...byTenant].map(([tenant, slots]) => this.#refreshSlots(tenant, slots, 'XX')));
  }

  #refreshSlots(tenant: string, slots: string[], mode: 'XX' | 'ADD'): Promise<void> {
    return this.#redis.venusRefreshSlots(this.#key(tenant, 'slots'), this.#leaseMs, mode, this.#now(), ...slots).then(
      () => {},
      (error: unknown) => this.#onError(error),
    );
  }

  #key(tenant: string, what: 'slots' | 'sessions' | 'requests'): string {
    return `${this.#prefix}quota:${tenant}:${what}`;
  }
}

function refusedRate(tenant: string, what: string, limit: BucketLimit, retryAfterMs: number): Admission {
  const message = `tenant ${tenant} is over its fleet-wide rate of ${what} (${limit.perMinute}/min, burst ${limit.burst})`;
  return { ok: false, retryAfterMs, message };
}
