import { createLogger, type FleetKeys, fleetKeys } from '@venus/protocol';
import { Redis } from 'ioredis';

const log = createLogger('gpu-worker.fleet');

export interface FleetMemberOptions {
  /** Redis URL of the fleet registry. */
  redisUrl: string;
  /** Key prefix shared with the edges. Default none (`fleet:workers`). */
  prefix?: string;
  /** Unique worker id (e.g. the pod name). */
  id: string;
  /** The relay url edges connect to, as reachable from them. */
  url: string;
  maxSessions: number;
  /**
   * The model variant served here, from the model port's capabilities (`model`, `modelRevision`):
   * registered so that edges asking for a variant place only here. Unset: registered as none, which
   * only edges that take any variant place on.
   */
  capabilities?: { model: string; modelRevision: string };
  /** Live sessions right now, read at each heartbeat. */
  sessions(): number;
  /** The registration expires this long after the last heartbeat. Default 15 s. */
  ttlMs?: number;
  /** Default a third of the TTL, so one missed beat does not expire the worker. */
  heartbeatMs?: number;
  /** Heartbeat failures (Redis away); the member keeps trying. Default: a warning in the log. */
  onError?(error: unknown): void;
}

/**
 * This GPU worker's entry in the Redis fleet registry: its relay url, model variant, capacity (what
 * its model port measured, or the operator's cap) and live sessions,
 * refreshed by a heartbeat whose TTL expires the entry if the worker dies. `drain()` keeps the entry
 * (and the sessions) but tells edges to place nothing new here; `leave()` removes it.
 *
 * @example
 *   const member = new FleetMember({ redisUrl, id: 'gpu-1', url: relay.url, maxSessions: 40, sessions: () => relay.sessionCount });
 *   await member.start();
 *   process.on('SIGTERM', async () => { await member.drain(); ... await member.leave(); });
 */
export class FleetMember {
  readonly #options: FleetMemberOptions;
  readonly #keys: FleetKeys;
  readonly #redis: Redis;
  readonly #ttlMs: number;
  #timer: ReturnType<typeof setInterval> | undefined;
  #draining = false;
  #left = false;

  constructor(options: FleetMemberOptions) {
    this.#options = options;
    this.#keys = fleetKeys(options.prefix);
    this.#ttlMs = options.ttlMs ?? 15_000;
    this.#redis = new Redis(options.redisUrl, { connectionName: `fleet-member:${options.id}` });
  }

  get draining(): boolean {
    return this.#draining;
  }

  /** Registers now, then on every heartbeat. */
  async start(): Promise<void> {
    await this.heartbeat();
    this.#timer = setInterval(
      () => {
        this.heartbeat().catch((error: unknown) =>
          (this.#options.onError ?? ((err) => log.warn({ err, worker: this.#options.id }, 'fleet heartbeat failed')))(
            error,
          ),
        );
      },
      this.#options.heartbeatMs ?? Math.floor(this.#ttlMs / 3),
    );
    this.#timer.unref();
  }

  /** Writes the entry and renews its TTL. */
  async heartbeat(): Promise<void> {
    if (this.#left) return;
    const { id, url, maxSessions, capabilities } = this.#options;
    const key = this.#keys.worker(id);
    await this.#redis
      .multi()
      .hset(key, {
        id,
        url,
        maxSessions: String(maxSessions),
        model: capabilities?.model ?? '',
        modelRevision: capabilities?.modelRevision ?? '',
        sessions: String(this.#options.sessions()),
        draining: this.#draining ? '1' : '0',
        heartbeatAtMs: String(Date.now()),
      })
      .pexpire(key, this.#ttlMs)
      .sadd(this.#keys.workers, id)
      .exec();
  }

  /** No new sessions: edges skip a draining worker. */
  async drain(): Promise<void> {
    this.#draining = true;
    await this.heartbeat();
  }

  /** Stops the heartbeat and removes the entry. */
  async leave(): Promise<void> {
    if (this.#left) return;
    this.#left = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#redis
      .multi()
      .del(this.#keys.worker(this.#options.id))
      .srem(this.#keys.workers, this.#options.id)
      .exec();
    await this.#redis.quit().catch(() => this.#redis.disconnect());
  }
}
