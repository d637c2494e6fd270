import type { FunctionsCatalog } from '@venus/protocol';
import type { VenusFunction } from '../function-definition.ts';
import { FunctionRegistry } from '../function-registry.ts';
import { catalogFunctions } from './catalog-functions.ts';

/**
 * A FunctionRegistry that also holds one tenant's deployed functions, for executors that take a
 * registry (InProcessExecutor, BullmqDelegationConsumer) in a single-tenant deployment. Deployed
 * functions appear after `refresh()`; call it after deploys or on a timer. Built-ins win on a
 * name clash. Multi-tenant hosts use CatalogDelegationRunner instead.
 *
 * @example
 *   const registry = new TenantCatalogRegistry(catalog, 'default', createBuiltinFunctions());
 *   await registry.refresh();
 *   const executor = new InProcessExecutor({ registry });
 */
export class TenantCatalogRegistry extends FunctionRegistry {
  readonly #catalog: FunctionsCatalog;
  readonly #tenant: string;
  #deployed = new Map<string, VenusFunction>();

  constructor(catalog: FunctionsCatalog, tenant: string, functions: Iterable<VenusFunction> = []) {
    super(functions);
    this.#catalog = catalog;
    this.#tenant = tenant;
  }

  async refresh(): Promise<void> {
    const deployed = new Map<string, VenusFunction>();
    for (const fn of await catalogFunctions(this.#catalog, this.#tenant)) {
      if (super.get(fn.name) === undefined) deployed.set(fn.name, fn);
    }
    this.#deployed = deployed;
  }

  override get(name: string): VenusFunction | undefined {
    return super.get(name) ?? this.#deployed?.get(name);
  }

  override list(): readonly VenusFunction[] {
    return [...super.list(), ...(this.#deployed?.values() ?? [])];
  }
}
