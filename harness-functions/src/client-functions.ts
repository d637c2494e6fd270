import { type ClientFunction, ParametersSchema, VenusError } from '@venus/protocol';
import type { VenusFunction } from './function-definition.ts';
import { extractArguments } from './platform/argument-extraction.ts';
import { parametersValidator } from './platform/parameters-validator.ts';

/** Functions that are the client's to run: the runner hands back a call instead of running them. */
const CLIENT_FUNCTIONS = new WeakSet<VenusFunction>();

/**
 * A delegation's client functions (the session's declared tools) as VenusFunctions, so the planner
 * weighs them with the built-in and deployed ones by name, description and parameters, and
 * extracts their arguments the same way (extractArguments over their JSON Schema). A client
 * function whose name a function of the harness already has is left out: names are one namespace,
 * and the harness's own come first. One whose parameters fall outside the schema subset the
 * planner understands is left out too (the edge projects them onto it, so this is a safety net).
 *
 * @example
 *   const fns = clientFunctions(request.clientFunctions ?? [], registry.list());
 *   isClientFunction(fns[0]!); // true
 */
export function clientFunctions(specs: readonly ClientFunction[], taken: readonly VenusFunction[]): VenusFunction[] {
  if (specs.length === 0) return [];
  // A session's tools ride on each of its delegations unchanged: built once per distinct set.
  const key = `${taken.map((fn) => fn.name).join(',')}\n${JSON.stringify(specs)}`;
  const cached = BUILT.get(key);
  if (cached !== undefined) {
    BUILT.delete(key);
    BUILT.set(key, cached);
    return cached;
  }
  const built = buildClientFunctions(specs, taken);
  BUILT.set(key, built);
  if (BUILT.size > MAX_BUILT) BUILT.delete(BUILT.keys().next().value ?? '');
  return built;
}

/**
 * Built sets kept, least recently used dropped first: about one per live session with tools. A set
 * of 32 tools (the most a session has) is a few hundred KB of schemas and router vocabulary.
 */
const MAX_BUILT = 64;
const BUILT = new Map<string, VenusFunction[]>();

function buildClientFunctions(specs: readonly ClientFunction[], taken: readonly VenusFunction[]): VenusFunction[] {
  const names = new Set(taken.map((fn) => fn.name));
  const out: VenusFunction[] = [];
  for (const spec of specs) {
    if (names.has(spec.name)) continue;
    const parameters = ParametersSchema.safeParse(spec.parameters);
    if (!parameters.success) continue;
    let validator: VenusFunction<Record<string, unknown>>['parameters'];
    try {
      validator = parametersValidator(parameters.data);
    } catch {
      continue; // a pattern RE2 cannot run, min above max: nothing the planner could ever satisfy
    }
    names.add(spec.name);
    const fn: VenusFunction<Record<string, unknown>> = {
      name: spec.name,
      description: spec.description,
      parameters: validator,
      examples: [],
      // Parameter names and descriptions are router vocabulary too ("order_id": order).
      keywords: Object.entries(parameters.data.properties).map(
        ([key, p]) => `${key.replaceAll('_', ' ')} ${p.description ?? ''}`,
      ),
      extract: (query) => extractArguments(query, parameters.data),
      run: async () => {
        throw new VenusError('internal_error', `${spec.name} is a client function: the client runs it`);
      },
    };
    CLIENT_FUNCTIONS.add(fn as VenusFunction);
    out.push(fn as VenusFunction);
  }
  return out;
}

export function isClientFunction(fn: VenusFunction): boolean {
  return CLIENT_FUNCTIONS.has(fn);
}
