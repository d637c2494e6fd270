import {
  type FunctionRecord,
  type FunctionsCatalog,
  type InvocationErrorCode,
  type InvocationResult,
  VenusError,
} from '@venus/protocol';
import type { VenusFunction } from '../function-definition.ts';
import { extractArguments } from './argument-extraction.ts';
import { parametersValidator } from './parameters-validator.ts';

const TIMEOUT_CODES: ReadonlySet<InvocationErrorCode> = new Set(['cpu_limit', 'wall_timeout', 'http_timeout']);

/**
 * One deployed version as a VenusFunction, so the router and DelegationRunner treat it like a
 * built-in: its description, examples and keywords are router vocabulary, `extract` follows
 * extractArguments, and `run` invokes the (latest) deployed version through the catalog with the
 * delegation's work id, session and abort signal. A failed invocation throws a VenusError whose
 * message can be spoken; the details stay in the function's logs.
 *
 * @example
 *   const record = await catalog.get('acme', 'greet');
 *   const fn = catalogFunction(catalog, record!);
 */
export function catalogFunction(
  catalog: FunctionsCatalog,
  record: FunctionRecord,
): VenusFunction<Record<string, unknown>> {
  const { spec, tenant } = record;
  const fn: VenusFunction<Record<string, unknown>> = {
    name: spec.name,
    description: spec.description,
    parameters: parametersValidator(spec.parameters),
    examples: spec.examples,
    ...(spec.keywords === undefined ? {} : { keywords: spec.keywords }),
    ...(spec.delivery === undefined ? {} : { delivery: spec.delivery }),
    extract: (query) => extractArguments(query, spec.parameters),
    async run(args, ctx) {
      ctx.progress(`Running ${spec.name}`);
      let result: InvocationResult;
      try {
        result = await catalog.invoke(tenant, spec.name, args, {
          workId: ctx.workId,
          session: ctx.session,
          signal: ctx.signal,
        });
      } catch (error) {
        if (VenusError.isInstance(error) && error.code === 'function_not_found') {
          throw new VenusError('function_not_found', `${spec.name} is no longer deployed`, { cause: error });
        }
        throw error;
      }
      if (!result.ok) {
        const code = result.error?.code;
        // An Error as cause, so the delegation's failure reason names what was wrong
        // ("invalid_output: the reply is nested deeper than 64 levels"), not only that it failed.
        const cause = Object.assign(new Error(`${code ?? 'function_error'}: ${result.error?.message ?? 'failed'}`), {
          code,
        });
        throw new VenusError(
          code !== undefined && TIMEOUT_CODES.has(code) ? 'function_timeout' : 'function_failed',
          `the ${spec.name.replaceAll('_', ' ')} function failed`,
          { cause },
        );
      }
      return { data: result.data ?? null, speech: result.speech };
    },
  };
  return fn;
}

/** The latest version of every function a tenant has deployed, as VenusFunctions. */
export async function catalogFunctions(catalog: FunctionsCatalog, tenant: string): Promise<VenusFunction[]> {
  const summaries = await catalog.list(tenant);
  const records = await Promise.all(summaries.map((summary) => catalog.get(tenant, summary.name)));
  return records
    .filter((record): record is FunctionRecord => record !== null)
    .map((record) => catalogFunction(catalog, record) as VenusFunction);
}
