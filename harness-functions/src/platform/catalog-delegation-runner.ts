import type { DelegationRequest, FunctionsCatalog } from '@venus/protocol';
import {
  DelegationRunner,
  type DelegationRunnerOptions,
  type RunHooks,
  type RunOutcome,
} from '../delegation-runner.ts';
import type { VenusFunction } from '../function-definition.ts';
import { FunctionRegistry } from '../function-registry.ts';
import { catalogFunctions } from './catalog-functions.ts';

export interface CatalogDelegationRunnerOptions extends Omit<DelegationRunnerOptions, 'registry'> {
  catalog: FunctionsCatalog;
  /** Functions every tenant has (the built-ins); a deployed function with the same name is skipped. */
  functions?: readonly VenusFunction[];
  /** How long a tenant's function list is reused before the catalog is asked again (default 2 s). */
  cacheMs?: number;
}

/**
 * A DelegationRunner per tenant: routes each delegation among the built-ins plus the functions its
 * own tenant (`request.tenant`) deployed, so tenant A's delegations can never reach tenant B's
 * functions. Same `run(request, hooks)` shape as DelegationRunner, for queue consumers and
 * executors that take a runner.
 *
 * @example
 *   const runner = new CatalogDelegationRunner({ catalog, functions: createBuiltinFunctions() });
 *   const outcome = await runner.run(request, { signal: AbortSignal.timeout(180_000) });
 */
export class CatalogDelegationRunner {
  readonly #options: CatalogDelegationRunnerOptions;
  readonly #cacheMs: number;
  readonly #cache = new Map<string, { atMs: number; runner: Promise<DelegationRunner> }>();

  constructor(options: CatalogDelegationRunnerOptions) {
    this.#options = options;
    this.#cacheMs = options.cacheMs ?? 2000;
  }

  async run(request: DelegationRequest, hooks: RunHooks): Promise<RunOutcome> {
    return (await this.runnerFor(request.tenant)).run(request, hooks);
  }

  /** The runner for one tenant, its functions fetched at most every `cacheMs`. */
  runnerFor(tenant: string): Promise<DelegationRunner> {
    const cached = this.#cache.get(tenant);
    if (cached !== undefined && Date.now() - cached.atMs < this.#cacheMs) return cached.runner;
    const runner = this.#build(tenant);
    this.#cache.set(tenant, { atMs: Date.now(), runner });
    runner.catch(() => this.#cache.delete(tenant));
    return runner;
  }

  async #build(tenant: string): Promise<DelegationRunner> {
    const { catalog, functions = [], cacheMs: _cacheMs, ...runnerOptions } = this.#options;
    const registry = new FunctionRegistry(functions);
    for (const fn of await catalogFunctions(catalog, tenant)) {
      if (registry.get(fn.name) === undefined) registry.register(fn);
    }
    return new DelegationRunner({ ...runnerOptions, registry });
  }
}
