/** What a tenant has used; milliseconds are of audio or of function run time. */
export interface UsageCounters {
  sessions: number;
  audioInMs: number;
  audioOutMs: number;
  delegations: number;
  functionMs: number;
}

export const USAGE_FIELDS = ['sessions', 'audioInMs', 'audioOutMs', 'delegations', 'functionMs'] as const;

export interface UsageReport extends UsageCounters {
  tenant: string;
  /** Epoch milliseconds of the first recorded use; null when there is none. */
  since: number | null;
}

/**
 * Per-tenant usage counters. `add` never blocks the realtime path (an implementation may batch);
 * `read` includes everything added before it on this edge.
 */
export interface UsageMeter {
  add(tenant: string, delta: Partial<UsageCounters>): void;
  read(tenant: string): Promise<UsageReport>;
  close(): Promise<void>;
}

export function emptyUsage(): UsageCounters {
  return { sessions: 0, audioInMs: 0, audioOutMs: 0, delegations: 0, functionMs: 0 };
}

/**
 * UsageMeter in this process's memory: counts since the process started.
 *
 * @example
 *   const meter = new InMemoryUsageMeter();
 *   meter.add('acme', { audioInMs: 20 });
 *   (await meter.read('acme')).audioInMs; // 20
 */
export class InMemoryUsageMeter implements UsageMeter {
  readonly #counters = new Map<string, UsageReport>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  add(tenant: string, delta: Partial<UsageCounters>): void {
    let report = this.#counters.get(tenant);
    if (report === undefined) {
      report = { tenant, since: this.#now(), ...emptyUsage() };
      this.#counters.set(tenant, report);
    }
    for (const field of USAGE_FIELDS) report[field] += delta[field] ?? 0;
  }

  async read(tenant: string): Promise<UsageReport> {
    const report = this.#counters.get(tenant);
    return report === undefined ? { tenant, since: null, ...emptyUsage() } : { ...report };
  }

  async close(): Promise<void> {}
}
