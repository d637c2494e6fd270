import {
  type BackendResult,
  CLIENT_FUNCTION_LIMITS,
  DELEGATION_LIMITS,
  type DelegationRequest,
  type DeliveryPolicy,
  toVenusError,
  VenusError,
} from '@venus/protocol';
import { raceAbort } from './abortable.ts';
import { clientFunctions, isClientFunction } from './client-functions.ts';
import { type Evidence, readEvidence, type TimelineReader } from './evidence.ts';
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
  /** The conversation up to the request's evidence cutoff, for the planner, the function and the oralizer. */
  evidence?: Evidence;
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
      const { evidence } = hooks;
      const context = evidence === undefined ? {} : { evidence };
      const own = this.registry.list();
      const client = clientFunctions(request.clientFunctions ?? [], own);
      const candidates = client.length === 0 ? own : [...own, ...client];
      const plan = await raceAbort(this.#planner.plan(request.query, candidates, context), signal);
      if (plan === null) throw new VenusError('function_not_found', 'no function fits the query');
      fn = this.registry.get(plan.functionName) ?? client.find((c) => c.name === plan.functionName);
      if (fn === undefined) throw new VenusError('function_not_found', `no function named "${plan.functionName}"`);
      const parsed = fn.parameters.safeParse(plan.args);
      if (!parsed.success) {
        throw new VenusError('invalid_arguments', "I couldn't make out the details", { cause: parsed.error });
      }
      hooks.onPlanned?.(fn.name);
      if (isClientFunction(fn)) {
        // Not run here: the client is asked to, and its output becomes the work's result.
        const args = JSON.stringify(parsed.data);
        if (args.length > CLIENT_FUNCTION_LIMITS.maxArgumentsChars) {
          throw new VenusError('invalid_arguments', 'the details were too long to pass on');
        }
        const result = this.#result(request, fn, true, '', undefined);
        result.clientCall = { name: fn.name, arguments: args };
        return { ok: true, functionName: fn.name, result };
      }
      const output = await raceAbort(
        fn.run(parsed.data, {
          signal,
          session: request.session,
          workId: request.workId,
          progress: (message) => hooks.onProgress?.(message),
          ...(request.workSnapshot === undefined ? {} : { workSnapshot: request.workSnapshot }),
          ...context,
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
        ...context,
      });
      return { ok: true, functionName: fn.name, result: this.#result(request, fn, true, text, output.data) };
    } catch (thrown) {
      const error = signal.aborted ? toVenusError(signal.reason) : asSpeakableError(thrown);
      const text = this.#oralizer.oralize({
        ok: false,
        error,
        ...(fn ? { functionName: fn.name } : {}),
        ...(hooks.evidence === undefined ? {} : { evidence: hooks.evidence }),
      });
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
  /** The functions delegations may run; or give `runner` instead. */
  registry?: FunctionRegistry;
  /** Runs each delegation instead of a DelegationRunner over `registry` (e.g. a per-tenant catalog runner). */
  runner?: DelegationRunLike;
  planner?: Planner;
  oralizer?: Oralizer;
  defaultPolicy?: DeliveryPolicy;
  /**
   * Where each delegation's evidence is read (the session timeline up to its cutoff); without it
   * planners, functions and the oralizer get none. A failed read is reported and the work runs without.
   */
  timeline?: TimelineReader;
}

/**
 * The runner an executor uses: the one given, or a DelegationRunner over the registry given; with
 * a `timeline`, wrapped so that each run first reads its evidence.
 */
export function runnerFrom(
  owner: string,
  choice: RunnerChoice,
  clock: { now: () => number; resultTtlMs: number },
  onEvidenceError: (error: unknown, request: DelegationRequest) => void = () => {},
): DelegationRunLike {
  const runner = plainRunner(owner, choice, clock);
  const { timeline } = choice;
  if (timeline === undefined) return runner;
  return {
    async run(request, hooks) {
      // A run whose signal is already aborted only words its failure (e.g. a job that failed for good).
      if (hooks.signal.aborted) return runner.run(request, hooks);
      const evidence = await readEvidence(timeline, request, { signal: hooks.signal }).catch((error: unknown) => {
        if (!hooks.signal.aborted) onEvidenceError(error, request);
        return undefined;
      });
      return runner.run(request, evidence === undefined ? hooks : { ...hooks, evidence });
    },
  };
}

function plainRunner(
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
