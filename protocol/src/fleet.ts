import { z } from 'zod';

/**
 * The fleet registry in Redis, shared by GPU workers (which register and heartbeat) and edges
 * (which place sessions). `<prefix>fleet:workers` is the set of worker ids; each worker's record is
 * the hash `<prefix>fleet:worker:<id>`, whose key TTL is the heartbeat: a worker that stops
 * refreshing it expires, and edges stop placing sessions on it.
 */
export function fleetKeys(prefix = '') {
  return {
    workers: `${prefix}fleet:workers`,
    worker: (id: string) => `${prefix}fleet:worker:${id}`,
    /** What `worker(id)` is with the id left off (for scripts that build the key themselves). */
    workerPrefix: `${prefix}fleet:worker:`,
  };
}

export type FleetKeys = ReturnType<typeof fleetKeys>;

/** One worker's record as stored (Redis hashes hold strings, hence the coercions). */
export const FleetWorkerRecordSchema = z.object({
  id: z.string().min(1),
  /** ws(s)://host:port/relay that edges connect to. */
  url: z.url(),
  maxSessions: z.coerce.number().int().nonnegative(),
  /** Sessions the worker hosts, as of its last heartbeat, plus placements since. */
  sessions: z.coerce.number().int().nonnegative(),
  /** A draining worker keeps its sessions but takes no new ones. */
  draining: z.enum(['0', '1']).transform((flag) => flag === '1'),
  heartbeatAtMs: z.coerce.number().nonnegative(),
  /** The model variant it serves (its model port's `model` and `modelRevision`); '' if unregistered. */
  model: z.string().default(''),
  modelRevision: z.string().default(''),
});

export type FleetWorkerRecord = z.infer<typeof FleetWorkerRecordSchema>;
