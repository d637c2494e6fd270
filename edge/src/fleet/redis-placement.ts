import { type FleetKeys, fleetKeys, VenusError } from '@venus/protocol';
import { Redis } from 'ioredis';
import type { PlaceOptions, WorkerEndpoint, WorkerPlacement } from './worker-placement.ts';

export interface RedisPlacementOptions {
  url: string;
  /** Key prefix shared with the workers' registrations. Default none (`fleet:workers`). */
  prefix?: string;
  /**
   * Only workers of this model variant: a model name (`venus-reference`, any revision) or
   * `model@revision` (`venus-reference@reference-v1`), matched against what each worker registered
   * from its model port's capabilities. Unset: any worker. A failover re-places with the same
   * placement, so on the same variant.
   */
  variant?: string;
}

/**
 * Picks the least loaded (sessions / capacity) live, non-draining worker with room, of the variant
 * in ARGV[2] ('' = any; a model name, or model@revision) and other than the ids in ARGV[3..], and
 * reserves a slot on it, in one step. A worker whose heartbeat expired has no hash any more (its
 * key's TTL is the heartbeat): HMGET answers nil for its url, so it is never picked, and it is
 * pruned from the set on the way. Reads keys it builds itself, so this runs on a single Redis (or a
 * cluster with every fleet key in one hash slot).
 */
const PLACE_SCRIPT = `
local ids = redis.call('SMEMBERS', KEYS[1])
local variant = ARGV[2]
local excluded = {}
for i = 3, #ARGV do excluded[ARGV[i]] = true end
local best, bestUrl, bestLoad
for _, id in ipairs(ids) do
  local key = ARGV[1] .. id
  local f = redis.call('HMGET', key, 'url', 'maxSessions', 'sessions', 'draining', 'model', 'modelRevision')
  local model = f[5] or ''
  local ofVariant = variant == '' or model == variant or (model .. '@' .. (f[6] or '')) == variant
  if not f[1] then
    redis.call('SREM', KEYS[1], id)
  elseif f[4] ~= '1' and ofVariant and not excluded[id] then
    local max = tonumber(f[2]) or 0
    local n = tonumber(f[3]) or 0
    if n < max and (bestLoad == nil or n / max < bestLoad) then
      best, bestUrl, bestLoad = id, f[1], n / max
    end
  end
end
if best == nil then return false end
redis.call('HINCRBY', ARGV[1] .. best, 'sessions', 1)
return {best, bestUrl}
`;

type PlacingRedis = Redis & {
  placeSession(
    workersKey: string,
    workerPrefix: string,
    variant: string,
    ...exclude: string[]
  ): Promise<[string, string] | null>;
};

/**
 * Placement from the Redis fleet registry (`fleet:workers`) that GPU workers heartbeat into. A
 * placement counts against the worker at once, so edges placing at the same moment do not overfill
 * it; each worker's next heartbeat replaces the count with the sessions it really hosts.
 *
 * @example
 *   const placement = new RedisPlacement({ url: process.env.REDIS_URL! });
 *   const worker = await placement.place('sess_1'); // { id: 'gpu-1', url: 'ws://10.0.0.7:8081/relay' }
 */
export class RedisPlacement implements WorkerPlacement {
  readonly #redis: PlacingRedis;
  readonly #keys: FleetKeys;
  readonly #variant: string;

  constructor(options: RedisPlacementOptions) {
    this.#keys = fleetKeys(options.prefix);
    this.#variant = options.variant?.trim() ?? '';
    const redis = new Redis(options.url, { connectionName: 'fleet-placement', maxRetriesPerRequest: 2 });
    redis.defineCommand('placeSession', { numberOfKeys: 1, lua: PLACE_SCRIPT });
    this.#redis = redis as PlacingRedis;
  }

  async place(session: string, options: PlaceOptions = {}): Promise<WorkerEndpoint> {
    let picked: [string, string] | null;
    try {
      const exclude = options.exclude ?? [];
      picked = await this.#redis.placeSession(this.#keys.workers, this.#keys.workerPrefix, this.#variant, ...exclude);
    } catch (cause) {
      throw new VenusError('model_unavailable', `fleet registry unreachable: ${String(cause)}`, { cause });
    }
    if (!picked) {
      const of = this.#variant === '' ? '' : ` of model variant ${this.#variant}`;
      throw new VenusError('model_unavailable', `no GPU worker${of} has room for session ${session}`);
    }
    return { id: picked[0], url: picked[1] };
  }

  async registered(ids: readonly string[]): Promise<ReadonlySet<string>> {
    if (ids.length === 0) return new Set();
    const pipeline = this.#redis.pipeline();
    for (const id of ids) pipeline.exists(this.#keys.workerPrefix + id);
    const replies = (await pipeline.exec()) ?? [];
    const live = new Set<string>();
    for (const [i, reply] of replies.entries()) {
      const [error, count] = reply;
      if (error) throw error;
      if (count === 1) live.add(ids[i]!);
    }
    return live;
  }

  release(_session: string): void {
    // The worker's heartbeat reports its real count; decrementing here would count the end twice.
  }

  async close(): Promise<void> {
    await this.#redis.quit().catch(() => this.#redis.disconnect());
  }
}
