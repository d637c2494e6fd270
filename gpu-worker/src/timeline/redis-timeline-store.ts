import type { TimelineAppendOptions, TimelineEvent, TimelineReadOptions, TimelineStore } from '@venus/protocol';
import { REDIS_TIMELINE, VenusError } from '@venus/protocol';
import type { Redis } from 'ioredis';
import { checkAppendBatch, seqConflict } from './append-batch.ts';
import { storeConnection } from './redis-connection.ts';
import { lifeChange, type TimelineBounds, timelineBounds } from './timeline-bounds.ts';

/**
 * Checks that the stream ends at the expected seq and adds the whole batch, in one atomic step, so
 * a stale writer after a handover can neither interleave with nor partly overwrite the new owner;
 * trims the stream to about its length bound and sets its expiry in the same step.
 * KEYS[1]: the session's stream. ARGV[1]: the seq the stream must end at (as text), or 'empty':
 * the stream must not exist (a writer starting again after the store lost it); ARGV[2]: the
 * length bound (XADD MAXLEN ~); ARGV[3]: what the batch does to the session's life: 'closed' (then
 * ARGV[4] is the absolute expiry in ms, '0' to delete at once), 'opened' or 'live'; ARGV[5]: the
 * idle TTL; ARGV[6]: the retention. Then pairs of stream ID and event JSON from ARGV[7].
 * A stream whose TTL is at most the retention has ended: a late 'live' append leaves its expiry
 * alone (the idle TTL is always longer than the retention, so a live stream's TTL never is).
 * Returns {1, last} when written, {0, last} when fenced.
 */
const APPEND_LUA = `
local tip = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local last = '0'
if #tip > 0 then last = string.match(tip[1][1], '^(%d+)') end
if ARGV[1] == 'empty' then
  if #tip > 0 then return {0, last} end
elseif last ~= ARGV[1] then return {0, last} end
for i = 7, #ARGV, 2 do
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], ARGV[i], 'e', ARGV[i + 1])
end
if ARGV[3] == 'closed' then
  if ARGV[4] == '0' then redis.call('DEL', KEYS[1]) else redis.call('PEXPIREAT', KEYS[1], ARGV[4]) end
elseif ARGV[3] == 'opened' then
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
else
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl == -1 or ttl > tonumber(ARGV[6]) then redis.call('PEXPIRE', KEYS[1], ARGV[5]) end
end
return {1, last}
`;

const APPEND_COMMAND = 'venusTimelineAppend';
/** Stream entry field that holds the event JSON (the layout other processes read too). */
const FIELD = REDIS_TIMELINE.field;
const TAIL_PAGE = 256;

type AppendCommand = (key: string, expectedLast: string, ...args: string[]) => Promise<[number, string]>;
/** A live session's stream expires this long after its last append: the bound for a writer that died. */
const DEFAULT_IDLE_TTL_MS = 24 * 3_600_000;
type StreamEntry = [id: string, fields: string[]];

export interface RedisTimelineStoreOptions extends TimelineBounds {
  /** Connection URL; ignored when `client` is given. */
  url?: string;
  /** A connection to share. The store defines its script on it and never closes it. */
  client?: Redis;
  /** Key prefix, e.g. `venus:`; keys are `${prefix}timeline:${session}`. */
  prefix?: string;
  /** How long one XREAD of a tail blocks before it asks again. */
  blockMs?: number;
  /**
   * A live session's stream expires this long after its last append (default 24 h): the bound for
   * a writer that died without closing its sessions. Must be longer than the retention.
   */
  idleTtlMs?: number;
}

/**
 * Timeline store on Redis Streams: one stream per session whose entry IDs are `${seq}-0`, so reads
 * by seq range are XRANGEs and tails are XREADs. Appends go through one Lua script that fences
 * non-contiguous batches; appends issued back to back on one store reach Redis in order.
 *
 * Bounded (the policy the README documents): every XADD trims the stream to about `maxEvents`
 * (MAXLEN ~, default 50,000: Redis drops whole macro-nodes, so a few hundred more may stay); a live
 * stream expires `idleTtlMs` after its last append (default 24 h); when the session ends (a
 * `session.closed` event, or `endSession`) the stream gets PEXPIREAT now + `retentionMs`
 * (default 15 min), computed on the store's clock.
 *
 * @example
 *   const store = new RedisTimelineStore({ url: 'redis://127.0.0.1:6379', prefix: 'venus:' });
 *   await store.append(events);
 *   const firstTen = await store.read('s1', { fromSeq: 1, limit: 10 });
 *   await store.close();
 */
export class RedisTimelineStore implements TimelineStore {
  readonly #redis: Redis;
  readonly #ownsClient: boolean;
  readonly #prefix: string;
  readonly #blockMs: number;
  readonly #bounds: Required<TimelineBounds>;
  readonly #idleTtlMs: number;
  /** Dedicated blocking connections of live tails, closed with the store. */
  readonly #tailClients = new Set<Redis>();
  #closed = false;

  constructor(options: RedisTimelineStoreOptions = {}) {
    this.#ownsClient = options.client === undefined;
    this.#redis = options.client ?? storeConnection('timeline-store', options.url);
    this.#prefix = options.prefix ?? '';
    this.#blockMs = options.blockMs ?? 5_000;
    this.#bounds = timelineBounds(options);
    this.#idleTtlMs = options.idleTtlMs ?? Math.max(DEFAULT_IDLE_TTL_MS, 2 * this.#bounds.retentionMs);
    if (!(this.#idleTtlMs > this.#bounds.retentionMs)) {
      throw new VenusError('invalid_arguments', `timeline idleTtlMs (${this.#idleTtlMs}) must exceed the retention`);
    }
    this.#redis.defineCommand(APPEND_COMMAND, { numberOfKeys: 1, lua: APPEND_LUA });
  }

  async append(events: readonly TimelineEvent[], options: TimelineAppendOptions = {}): Promise<void> {
    const batch = checkAppendBatch(events);
    if (batch === null) return;
    const args: string[] = [];
    for (const event of events) args.push(`${event.seq}-0`, JSON.stringify(event));
    const append = (this.#redis as unknown as Record<typeof APPEND_COMMAND, AppendCommand>)[APPEND_COMMAND];
    const life = lifeChange(events) ?? 'live';
    const expiresAt = this.#bounds.retentionMs === 0 ? 0 : this.#bounds.now() + this.#bounds.retentionMs;
    const [written, last] = await append.call(
      this.#redis,
      this.#key(batch.session),
      options.afterLoss ? 'empty' : String(batch.firstSeq - 1),
      String(this.#bounds.maxEvents),
      life,
      String(expiresAt),
      String(this.#idleTtlMs),
      String(this.#bounds.retentionMs),
      ...args,
    );
    if (written !== 1) throw seqConflict(batch.session, Number(last), batch.firstSeq);
  }

  async read(session: string, options: TimelineReadOptions = {}): Promise<TimelineEvent[]> {
    const from = Math.max(1, options.fromSeq ?? 1);
    const to = options.toSeq === undefined ? '+' : `${options.toSeq}-0`;
    if (options.toSeq !== undefined && options.toSeq < from) return [];
    const key = this.#key(session);
    const entries: StreamEntry[] =
      options.limit === undefined
        ? await this.#redis.xrange(key, `${from}-0`, to)
        : options.limit <= 0
          ? []
          : await this.#redis.xrange(key, `${from}-0`, to, 'COUNT', options.limit);
    return entries.map(parseEntry);
  }

  async lastSeq(session: string): Promise<number> {
    const [tip] = await this.#redis.xrevrange(this.#key(session), '+', '-', 'COUNT', 1);
    return tip === undefined ? 0 : seqOf(tip[0]);
  }

  async *tail(session: string, options: { fromSeq?: number; signal: AbortSignal }): AsyncIterable<TimelineEvent> {
    const { signal } = options;
    const stopped = () => signal.aborted || this.#closed;
    let next = Math.max(1, options.fromSeq ?? 1);
    // Backlog on the shared connection: a tail stopped before it catches up never opens its own.
    try {
      while (!stopped()) {
        const page = await this.read(session, { fromSeq: next, limit: TAIL_PAGE });
        for (const event of page) {
          if (stopped()) return;
          next = event.seq + 1;
          yield event;
        }
        if (page.length < TAIL_PAGE) break;
      }
    } catch (error) {
      // close() quits the shared connection under a pending read.
      if (stopped()) return;
      throw error;
    }
    if (stopped()) return;

    // XREAD BLOCK holds its connection, so each live tail gets one of its own. Checked and
    // registered in one synchronous step, so close() either ends it here or disconnects it.
    // Named after the prefix so an operator can tell this store's tails apart in CLIENT LIST.
    const blocking = this.#redis.duplicate({ connectionName: `timeline-tail:${this.#prefix.replace(/\s/g, '_')}` });
    this.#tailClients.add(blocking);
    const stop = () => blocking.disconnect();
    signal.addEventListener('abort', stop, { once: true });
    const key = this.#key(session);
    try {
      while (!stopped()) {
        const reply = await blocking.xread('COUNT', TAIL_PAGE, 'BLOCK', this.#blockMs, 'STREAMS', key, `${next - 1}-0`);
        const entries = (reply as [string, StreamEntry[]][] | null)?.[0]?.[1] ?? [];
        for (const entry of entries) {
          if (stopped()) return;
          const event = parseEntry(entry);
          next = event.seq + 1;
          yield event;
        }
      }
    } catch (error) {
      // Aborting or closing disconnects the blocking connection, which rejects the pending XREAD.
      if (!stopped()) throw error;
    } finally {
      signal.removeEventListener('abort', stop);
      this.#tailClients.delete(blocking);
      blocking.disconnect();
    }
  }

  async delete(session: string): Promise<void> {
    await this.#redis.del(this.#key(session));
  }

  async endSession(session: string): Promise<void> {
    const key = this.#key(session);
    // The store's clock, not Redis's: a test's clock can end a session "in the past".
    if (this.#bounds.retentionMs === 0) await this.#redis.del(key);
    else await this.#redis.pexpireat(key, this.#bounds.now() + this.#bounds.retentionMs);
  }

  /** Ends every open tail and, when the store opened its connection, quits it. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const tails = [...this.#tailClients];
    this.#tailClients.clear();
    for (const client of tails) client.disconnect();
    if (this.#ownsClient) await this.#redis.quit();
  }

  #key(session: string): string {
    return REDIS_TIMELINE.key(this.#prefix, session);
  }
}

function seqOf(id: string): number {
  return Number.parseInt(id, 10);
}

function parseEntry([id, fields]: StreamEntry): TimelineEvent {
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] === FIELD) return JSON.parse(fields[i + 1]!) as TimelineEvent;
  }
  throw new VenusError('internal_error', `timeline stream entry ${id} has no '${FIELD}' field`);
}
