/**
 * Where the delegation queue keeps its data under one prefix (e.g. `venus:`):
 * - `${prefix}delegations:*`: the BullMQ queue (BullMQ prefix without its colon, queue `delegations`);
 * - `${prefix}work:${workId}`: the work record (a hash: state, attempts, cancel marker, end marker);
 * - `${prefix}work-events:${hostId}`: the events stream a session host reads;
 * - `${prefix}inflight:session:${session}` / `…:tenant:${tenant}`: in-flight slots (sorted sets
 *   scored by a deadline, so a slot that nobody released expires instead of leaking);
 * - `${prefix}delegation-cancel`: the pub/sub channel that tells harness workers to abort a job.
 * All keys of one work live on one Redis; Redis Cluster would need hash tags and is not supported.
 */
export interface DelegationKeys {
  readonly prefix: string;
  /** BullMQ's own `prefix` option. */
  readonly bullPrefix: string;
  readonly queueName: string;
  readonly cancelChannel: string;
  work(workId: string): string;
  events(hostId: string): string;
  sessionSlots(session: string): string;
  tenantSlots(tenant: string): string;
}

export const DEFAULT_DELEGATION_PREFIX = 'venus:';

export function delegationKeys(prefix: string = DEFAULT_DELEGATION_PREFIX): DelegationKeys {
  const bare = prefix.endsWith(':') ? prefix.slice(0, -1) : prefix;
  return {
    prefix,
    bullPrefix: bare === '' ? 'bull' : bare,
    queueName: 'delegations',
    cancelChannel: `${prefix}delegation-cancel`,
    work: (workId) => `${prefix}work:${workId}`,
    events: (hostId) => `${prefix}work-events:${hostId}`,
    sessionSlots: (session) => `${prefix}inflight:session:${session}`,
    tenantSlots: (tenant) => `${prefix}inflight:tenant:${tenant}`,
  };
}

/**
 * The BullMQ job id of a work: the work id itself, so a resubmission meets the job already there.
 * BullMQ refuses ids that read as integers or contain ':', so those few are encoded instead.
 */
export function jobIdFor(workId: string): string {
  if (/^-?\d+$/.test(workId) || workId.includes(':')) return `wid_${Buffer.from(workId).toString('base64url')}`;
  return workId;
}
