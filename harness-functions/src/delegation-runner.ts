import {
  type BackendResult,
  DELEGATION_LIMITS,
  type DelegationRequest,
  type DeliveryPolicy,
  toVenusError,
  VenusError,
} from '@venus/protocol';
import { raceAbort } from './abortable.ts';
import type { VenusFunction } from './function-definition.ts';
import type { FunctionRegistry } from './function-registry.ts';
import { DefaultOralizer, type Oralizer } from './oralizer.ts';
import type { Planner } from './planner.ts';
import { RouterPlanner } from './router-planner.ts';

export interface DelegationRunnerOptions {
  registry: FunctionRegistry;
  planner?: Planner;
  oralizer?: Oralizer;
  now?: () => number;
  resultTtlMs?: number;
  defaultPolicy?: DeliveryPolicy;
}

export interface RunHooks {
  /** Aborts planning and the function; its reason becomes the failure (e.g. VenusError('function_timeout')). */
  signal: AbortSignal;
  /** The plan is made and its arguments are valid: the function is about to run. */
  onPlanned?(functionName: string): void;
  /** What the function says it is doing now. */
  onProgress?(message: string): void;
}

export type RunOutcome =
  | { ok: true; functionName: string; result: BackendResult }
  | { ok: false; functionName?: string; error: VenusError; reason: string; result: BackendResult };

/** What executors need of a runner: DelegationRunner's `run`, which never throws. */
export interface DelegationRunLike {
  run(request: DelegationRequest, hooks: RunHooks): Promise<RunOutcome>;
}

/**
 * One delegation from query to spoken result: plan, validate arguments, run the function, oralize.
 * It owns no queue, timers or events, so the in-process executor and a queue worker share it. It
 * never throws: every failure becomes an apology result the assistant can speak.
 *
 * @example
 *   const runner = new DelegationRunner({ registry: new FunctionRegistry(createBuiltinFunctions()) });
 *   const outcome = await runner.run(request, { signal: AbortSignal.timeout(180_000) });
 *   outcome.result.text; // "It's 18 degrees and partly cloudy in Paris."
 */
export class DelegationRunner {
  readonly registry: FunctionRegistry;
  readonly #planner: Planner;
  readonly #oralizer: Oralizer;
  readonly #now: () => number;
  readonly #resultTtlMs: number;
  readonly #defaultPolicy: DeliveryPolicy;

  constructor(options: DelegationRunnerOptions) {
    this.registry = options.registry;
    this.#planner = options.planner ?? new RouterPlanner();
    this.#oralizer = options.oralizer ?? new DefaultOralizer();
    this.#now = options.now ?? Date.now;
    this.#resultTtlMs = options.resultTtlMs ?? DELEGATION_LIMITS.resultTtlMs;
    this.#defaultPolicy = options.defaultPolicy ?? 'when_idle';
  }

  async run(request: DelegationRequest, hooks: RunHooks): Promise<RunOutcome> {
    const { signal } = hooks;
    let fn: VenusFunction | undefined;
    try {
      if (signal.aborted) throw signal.reason;
      const plan = await raceAbort(this.#planner.plan(request.query, this.registry.list()), signal);
      if (plan === null) throw new VenusError('function_not_found', 'no function fits the query');
      fn = this.registry.get(plan.functionName);
      if (fn === undefined) throw new VenusError('function_not_found', `no function named "${plan.functionName}"`);
      const parsed = fn.parameters.safeParse(plan.args);
      if (!parsed.success) {
        throw new VenusError('invalid_arguments', "I couldn't make out the details", { cause: parsed.error });
      }
      hooks.onPlanned?.(fn.name);
      const output = await raceAbort(
        fn.run(parsed.data, {
          signal,
          session: request.session,
          workId: request.workId,
          progress: (message) => hooks.onProgress?.(message),
        }),
        signal,
      );
      if (typeof output?.speech !== 'string') {
        throw new VenusError('function_failed', 'something went wrong', {
          cause: new Error(`function ${fn.name} returned no speech`),
        });
      }
      const text = this.#oralizer.oralize({
        functionName: fn.name,
        speech: output.speech,
        data: output.data,
        ok: true,
      });
      return { ok: true, functionName: fn.name, result: this.#result(request, fn, true, text, output.data) };
    } catch (thrown) {
      const error = signal.aborted ? toVenusError(signal.reason) : asSpeakableError(thrown);
      const text = this.#oralizer.oralize({ ok: false, error, ...(fn ? { functionName: fn.name } : {}) });
      const outcome: RunOutcome = {
        ok: false,
        error,
        reason: `${error.code}: ${error.cause instanceof Error ? error.cause.message : error.message}`.slice(0, 500),
        result: this.#result(request, fn, false, text, undefined),
      };
      if (fn) outcome.functionName = fn.name;
      return outcome;
    }
  }

  #result(
    request: DelegationRequest,
    fn: VenusFunction | undefined,
    ok: boolean,
    text: string,
    data: unknown,
  ): BackendResult {
    const completedAtMs = this.#now();
    const result: BackendResult = {
      workId: request.workId,
      session: request.session,
      incarnation: request.incarnation,
      ok,
      text,
      policy: request.policy ?? fn?.delivery ?? this.#defaultPolicy,
      completedAtMs,
      expiresAtMs: completedAtMs + this.#resultTtlMs,
    };
    if (fn) result.functionName = fn.name;
    if (data !== undefined) result.data = data;
    return result;
  }
}

/** Functions speak through VenusErrors; anything else is a bug whose message is not for the listener. */
function asSpeakableError(thrown: unknown): VenusError {
  if (VenusError.isInstance(thrown)) return thrown;
  return new VenusError('function_failed', 'something went wrong', { cause: thrown });
}

/** How an executor is told what to run: a registry (a DelegationRunner is built over it) or a runner. */
export interface RunnerChoice {
  registry?: FunctionRegistry;
  runner?: DelegationRunLike;
  planner?: Planner;
  oralizer?: Oralizer;
  defaultPolicy?: DeliveryPolicy;
}

/** The runner an executor uses: the one given, or a DelegationRunner over the registry given. */
export function runnerFrom(
  owner: string,
  choice: RunnerChoice,
  clock: { now: () => number; resultTtlMs: number },
): DelegationRunLike {
  if (choice.runner !== undefined) return choice.runner;
  if (choice.registry === undefined) throw new VenusError('invalid_arguments', `${owner} needs a registry or a runner`);
  return new DelegationRunner({
    registry: choice.registry,
    now: clock.now,
    resultTtlMs: clock.resultTtlMs,
    defaultPolicy: choice.defaultPolicy ?? 'when_idle',
    ...(choice.planner ? { planner: choice.planner } : {}),
    ...(choice.oralizer ? { oralizer: choice.oralizer } : {}),
  });
}
