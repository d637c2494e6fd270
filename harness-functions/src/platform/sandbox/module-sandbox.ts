import type { InvocationError, ModuleLimits } from '@venus/protocol';
import { SandboxPool, type SandboxPoolOptions } from './sandbox-pool.ts';
import type { SandboxJob, SandboxOutcome } from './sandbox-thread.ts';

export interface ModuleRunRequest {
  tenant: string;
  source: string;
  /** Arguments as JSON text. */
  args: string;
  /** Granted secrets by name. */
  env: Record<string, string>;
  fetchHosts: readonly string[];
  limits: ModuleLimits;
  meta: { functionName: string; version: number; workId: string; session: string };
  signal?: AbortSignal;
}

/**
 * Runs deployed ES modules in pooled sandbox threads (worker_threads with heap limits, a fresh vm
 * context per job). `check` loads a module without calling it, which is how deploy proves the
 * source compiles, imports nothing and exports a function before anything is stored.
 *
 * @example
 *   const sandbox = new ModuleSandbox();
 *   const outcome = await sandbox.run({ tenant: 'acme', source, args: '{"who":"Ada"}', env: {}, fetchHosts: [],
 *     limits: { cpuMs: 1000, memoryMb: 64, wallMs: 5000 }, meta: { functionName: 'greet', version: 1, workId: 'w1', session: 's1' } });
 *   if (outcome.ok) JSON.parse(outcome.value);
 *   await sandbox.close();
 */
export class ModuleSandbox {
  readonly #pool: SandboxPool;
  #nextJobId = 1;

  constructor(options: SandboxPoolOptions = {}) {
    this.#pool = new SandboxPool(options);
  }

  run(request: ModuleRunRequest): Promise<SandboxOutcome> {
    return this.#runJob('invoke', request);
  }

  /** Loads the module (top-level code runs, under the same limits) and checks its export; null when fine. */
  async check(tenant: string, source: string, limits: ModuleLimits): Promise<InvocationError | null> {
    const outcome = await this.#runJob('check', this.#probe(tenant, source, limits));
    return outcome.ok ? null : outcome.error;
  }

  /** Compiles without running (imports allowed): a syntax check for Worker scripts; null when fine. */
  async parse(tenant: string, source: string): Promise<InvocationError | null> {
    const outcome = await this.#runJob(
      'parse',
      this.#probe(tenant, source, { cpuMs: 1000, memoryMb: 64, wallMs: 5000 }),
    );
    return outcome.ok ? null : outcome.error;
  }

  close(): Promise<void> {
    return this.#pool.close();
  }

  #probe(tenant: string, source: string, limits: ModuleLimits): ModuleRunRequest {
    return {
      tenant,
      source,
      args: '{}',
      env: {},
      fetchHosts: [],
      limits,
      meta: { functionName: 'deploy_check', version: 0, workId: 'deploy', session: 'deploy' },
    };
  }

  async #runJob(mode: SandboxJob['mode'], request: ModuleRunRequest): Promise<SandboxOutcome> {
    const thread = await this.#pool.acquire(request.tenant, request.limits.memoryMb);
    try {
      const job: SandboxJob = {
        id: this.#nextJobId++,
        mode,
        source: request.source,
        args: request.args,
        env: request.env,
        grants: { fetch: [...request.fetchHosts] },
        limits: { cpuMs: request.limits.cpuMs, memoryMb: request.limits.memoryMb },
        meta: request.meta,
        deadlineAt: Date.now() + request.limits.wallMs,
      };
      return await thread.run(job, {
        wallMs: request.limits.wallMs,
        ...(request.signal === undefined ? {} : { signal: request.signal }),
      });
    } finally {
      this.#pool.release(thread, request.tenant);
    }
  }
}
