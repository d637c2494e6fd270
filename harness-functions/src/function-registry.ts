import { VenusError } from '@venus/protocol';
import {
  describeFunction,
  FUNCTION_NAME_PATTERN,
  type FunctionDescription,
  type VenusFunction,
} from './function-definition.ts';

const MAX_NAME_LENGTH = 64;

/**
 * The functions a harness can run, by name. Names are snake_case and unique, so a plan can refer to
 * a function by name across processes (the in-process executor today, a queue worker tomorrow).
 *
 * @example
 *   const registry = new FunctionRegistry(createBuiltinFunctions());
 *   registry.get('weather')?.description;
 */
export class FunctionRegistry {
  readonly #functions = new Map<string, VenusFunction>();

  constructor(functions: Iterable<VenusFunction> = []) {
    for (const fn of functions) this.register(fn);
  }

  register<A>(fn: VenusFunction<A>): this {
    if (fn.name.length > MAX_NAME_LENGTH || !FUNCTION_NAME_PATTERN.test(fn.name)) {
      throw new VenusError('invalid_arguments', `function name "${fn.name}" is not snake_case (a-z, 0-9, _)`);
    }
    if (this.#functions.has(fn.name)) {
      throw new VenusError('invalid_arguments', `a function named "${fn.name}" is already registered`);
    }
    this.#functions.set(fn.name, fn as VenusFunction);
    return this;
  }

  get(name: string): VenusFunction | undefined {
    return this.#functions.get(name);
  }

  list(): readonly VenusFunction[] {
    return [...this.#functions.values()];
  }

  /** Client-facing descriptions with JSON Schema parameters. */
  describe(): FunctionDescription[] {
    return this.list().map(describeFunction);
  }
}
