import type { Redis } from 'ioredis';

/*
 * The work record's lifecycle, each step one atomic script so that racing parties (the producer
 * cancelling, a worker finishing, a second worker retrying a stalled job) agree on one outcome:
 * the first to set `end` wins, a `cancel` marker turns any later finish into CANCELLED, and
 * non-terminal events are dropped once either is set. Every script appends to the host's events
 * stream in the same step as the record changes, so the stream is the ordered, persisted history.
 *
 * Shared KEYS: [1] work hash, [2] events stream; [3] session slots, [4] tenant slots where slots move.
 * Shared ARGV: [1] stream MAXLEN (approximate), [2] stream TTL ms.
 */

// Each entry carries the attempt that wrote it ('a'), for audits of retried work.
const XADD_ALL = `
local function xadd_one(event, attempt)
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[1], '*', 'e', event, 'a', attempt or '')
end
local function xadd_all(first, attempt)
  for i = first, #ARGV do xadd_one(ARGV[i], attempt) end
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
end
`;

const RELEASE = `
local function release(work_id, ttl)
  redis.call('ZREM', KEYS[3], work_id)
  redis.call('ZREM', KEYS[4], work_id)
  redis.call('PEXPIRE', KEYS[1], ttl)
end
`;

/**
 * Accepts a delegation: refuses a known work id (idempotent resubmission) and full session or
 * tenant slots, else records the work, takes both slots and appends QUEUED.
 * ARGV: [3] workId [4] now ms [5] slot deadline ms [6] session limit [7] tenant limit
 * [8] record TTL ms [9] session [10] tenant [11] incarnation [12] QUEUED event JSON.
 * Returns {1, 0} accepted, {0, 0} duplicate, {-1, n} session full, {-2, n} tenant full.
 */
const ACCEPT_LUA = `${XADD_ALL}
if redis.call('EXISTS', KEYS[1]) == 1 then return {0, 0} end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', '(' .. ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', '(' .. ARGV[4])
local in_session = redis.call('ZCARD', KEYS[3])
if in_session >= tonumber(ARGV[6]) then return {-1, in_session} end
local in_tenant = redis.call('ZCARD', KEYS[4])
if in_tenant >= tonumber(ARGV[7]) then return {-2, in_tenant} end
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[3])
redis.call('ZADD', KEYS[4], ARGV[5], ARGV[3])
redis.call('PEXPIRE', KEYS[3], ARGV[8])
redis.call('PEXPIRE', KEYS[4], ARGV[8])
redis.call('HSET', KEYS[1], 'state', 'QUEUED', 'events', KEYS[2], 'session', ARGV[9], 'tenant', ARGV[10],
  'incarnation', ARGV[11], 'acceptedAt', ARGV[4], 'attempts', 0)
redis.call('PEXPIRE', KEYS[1], ARGV[8])
xadd_all(12, nil)
return {1, 0}
`;

/**
 * Appends non-terminal events (RUNNING, progress) unless the work has ended or is being cancelled.
 * ARGV: [3] new state for the record, or ''; [4..] event JSONs. Returns 1 when written.
 */
const EMIT_LUA = `${XADD_ALL}
local f = redis.call('HMGET', KEYS[1], 'state', 'end', 'cancel', 'attempt')
if not f[1] or f[2] or f[3] then return 0 end
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'state', ARGV[3]) end
xadd_all(4, f[4])
return 1
`;

/**
 * A worker picks the job up. Ended work is skipped; cancelled work ends CANCELLED here (the
 * cancel reached no worker: the job was waiting, or its worker died); otherwise counts the attempt
 * and, when a previous attempt had started running, appends QUEUED (the retry) first.
 * ARGV: [3] workId [4] worker id [5] result TTL ms [6] retry QUEUED event JSON.
 * Returns {'run', attempt}, {'done', 0}, {'cancelled', 0} or {'gone', 0}.
 */
const START_LUA = `${XADD_ALL}${RELEASE}
local f = redis.call('HMGET', KEYS[1], 'state', 'end', 'cancel', 'cancelledEvent', 'attempt')
if not f[1] then return {'gone', 0} end
if f[2] then return {'done', 0} end
if f[3] then
  redis.call('HSET', KEYS[1], 'end', 'cancelled', 'state', 'CANCELLED')
  xadd_one(f[4], f[5])
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
  release(ARGV[3], ARGV[5])
  return {'cancelled', 0}
end
local n = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
local attempt = ARGV[3] .. '#' .. n .. '@' .. ARGV[4]
redis.call('HSET', KEYS[1], 'attempt', attempt)
if f[1] == 'RUNNING' then
  redis.call('HSET', KEYS[1], 'state', 'QUEUED')
  xadd_all(6, attempt)
end
return {'run', n}
`;

/**
 * Ends the work exactly once and frees its slots. A cancel marker wins over the outcome: the work
 * ends CANCELLED with the event the canceller stored, and the result is never appended.
 * ARGV: [3] workId [4] result TTL ms [5] end kind ('result' | 'rejected' | '' to end only a
 * cancelled work) [6] record state [7..] event JSONs.
 * Returns 'finished', 'cancelled', 'duplicate', 'gone' or 'open' (nothing to end yet).
 */
const FINISH_LUA = `${XADD_ALL}${RELEASE}
local f = redis.call('HMGET', KEYS[1], 'state', 'end', 'cancel', 'cancelledEvent', 'attempt')
if not f[1] then return 'gone' end
if f[2] then return 'duplicate' end
if f[3] then
  redis.call('HSET', KEYS[1], 'end', 'cancelled', 'state', 'CANCELLED')
  xadd_one(f[4], f[5])
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
  release(ARGV[3], ARGV[4])
  return 'cancelled'
end
if ARGV[5] == '' then return 'open' end
redis.call('HSET', KEYS[1], 'end', ARGV[5], 'state', ARGV[6])
xadd_all(7, f[5])
release(ARGV[3], ARGV[4])
return 'finished'
`;

/**
 * Marks the work for cancellation, appends CANCELLING, stores the CANCELLED event for whoever ends
 * the work, and tells harness workers to abort it.
 * ARGV: [3] reason [4] CANCELLING event JSON [5] CANCELLED event JSON [6] channel [7] workId.
 * Returns 'ok', 'already', 'finished' or 'missing'.
 */
const CANCEL_LUA = `${XADD_ALL}
local f = redis.call('HMGET', KEYS[1], 'state', 'end', 'cancel', 'attempt')
if not f[1] then return 'missing' end
if f[2] then return 'finished' end
if f[3] then return 'already' end
redis.call('HSET', KEYS[1], 'cancel', ARGV[3], 'cancelledEvent', ARGV[5], 'state', 'CANCELLING')
xadd_one(ARGV[4], f[4])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('PUBLISH', ARGV[6], ARGV[7])
return 'ok'
`;

export interface StreamLimits {
  maxLen: number;
  ttlMs: number;
}

/** Work record, events stream, session slots, tenant slots. */
export type WorkKeys = [work: string, events: string, sessionSlots: string, tenantSlots: string];

type Reply = unknown;
type ScriptFn = (...args: (string | number)[]) => Promise<Reply>;

/** The scripts bound to one connection, with typed arguments. */
export interface DelegationScripts {
  accept(
    keys: WorkKeys,
    args: {
      workId: string;
      nowMs: number;
      slotDeadlineMs: number;
      sessionLimit: number;
      tenantLimit: number;
      recordTtlMs: number;
      session: string;
      tenant: string;
      incarnation: number;
      queuedEvent: string;
    },
  ): Promise<'accepted' | 'duplicate' | 'session_full' | 'tenant_full'>;
  emit(keys: [work: string, events: string], state: string, events: readonly string[]): Promise<boolean>;
  start(
    keys: WorkKeys,
    args: { workId: string; workerId: string; resultTtlMs: number; retryEvent: string },
  ): Promise<{ verdict: 'run' | 'done' | 'cancelled' | 'gone'; attempt: number }>;
  finish(
    keys: WorkKeys,
    args: { workId: string; resultTtlMs: number; end: '' | 'result' | 'rejected'; state: string },
    events: readonly string[],
  ): Promise<'finished' | 'cancelled' | 'duplicate' | 'gone' | 'open'>;
  cancel(
    keys: [work: string, events: string],
    args: { reason: string; cancellingEvent: string; cancelledEvent: string; channel: string; workId: string },
  ): Promise<'ok' | 'already' | 'finished' | 'missing'>;
}

const SCRIPTS = {
  venusDelegationAccept: { numberOfKeys: 4, lua: ACCEPT_LUA },
  venusDelegationEmit: { numberOfKeys: 2, lua: EMIT_LUA },
  venusDelegationStart: { numberOfKeys: 4, lua: START_LUA },
  venusDelegationFinish: { numberOfKeys: 4, lua: FINISH_LUA },
  venusDelegationCancel: { numberOfKeys: 2, lua: CANCEL_LUA },
} as const;

/** Defines the scripts on `redis` (EVALSHA with a fallback to EVAL, pipelined like any command). */
export function defineDelegationScripts(redis: Redis, stream: StreamLimits): DelegationScripts {
  for (const [name, definition] of Object.entries(SCRIPTS)) redis.defineCommand(name, definition);
  const call = (name: keyof typeof SCRIPTS, ...args: (string | number)[]): Promise<Reply> =>
    (redis as unknown as Record<string, ScriptFn>)[name]!.call(redis, ...args);
  const limits = [stream.maxLen, stream.ttlMs] as const;
  return {
    async accept(keys, a) {
      const reply = (await call(
        'venusDelegationAccept',
        ...keys,
        ...limits,
        a.workId,
        a.nowMs,
        a.slotDeadlineMs,
        a.sessionLimit,
        a.tenantLimit,
        a.recordTtlMs,
        a.session,
        a.tenant,
        a.incarnation,
        a.queuedEvent,
      )) as [number, number];
      const verdicts = { 1: 'accepted', 0: 'duplicate', [-1]: 'session_full', [-2]: 'tenant_full' } as const;
      return verdicts[reply[0] as 1 | 0 | -1 | -2];
    },
    async emit(keys, state, events) {
      return (await call('venusDelegationEmit', ...keys, ...limits, state, ...events)) === 1;
    },
    async start(keys, a) {
      const [verdict, attempt] = (await call(
        'venusDelegationStart',
        ...keys,
        ...limits,
        a.workId,
        a.workerId,
        a.resultTtlMs,
        a.retryEvent,
      )) as [string, number];
      return { verdict: verdict as 'run' | 'done' | 'cancelled' | 'gone', attempt: Number(attempt) };
    },
    async finish(keys, a, events) {
      return (await call(
        'venusDelegationFinish',
        ...keys,
        ...limits,
        a.workId,
        a.resultTtlMs,
        a.end,
        a.state,
        ...events,
      )) as 'finished' | 'cancelled' | 'duplicate' | 'gone' | 'open';
    },
    async cancel(keys, a) {
      return (await call(
        'venusDelegationCancel',
        ...keys,
        ...limits,
        a.reason,
        a.cancellingEvent,
        a.cancelledEvent,
        a.channel,
        a.workId,
      )) as 'ok' | 'already' | 'finished' | 'missing';
    },
  };
}
