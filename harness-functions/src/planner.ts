import type { Evidence } from './evidence.ts';
import type { VenusFunction } from './function-definition.ts';

/** Which function to call for a query, with its arguments. */
export interface Plan {
  functionName: string;
  args: unknown;
}

/** What a planner may know beyond the query: the conversation up to the delegation's evidence cutoff. */
export interface PlanContext {
  evidence?: Evidence;
}

/**
 * Chooses a function and its arguments for a plain-language query, or null when nothing fits.
 * The deterministic RouterPlanner is the default; a model-backed planner fits the same shape.
 */
export interface Planner {
  plan(query: string, functions: readonly VenusFunction[], context?: PlanContext): Promise<Plan | null>;
}
