import type { DeliveryPolicy, WorkSnapshotEntry } from '@venus/protocol';
import { z } from 'zod';
import type { Evidence } from './evidence.ts';

/** What a running function may use: cancellation, progress reporting, and who asked. */
export interface FunctionContext {
  /** Aborted on cancellation, timeout or executor shutdown; long waits must honour it. */
  signal: AbortSignal;
  /** Records what the function is doing now; the executor repeats it in its scheduled progress notices. */
  progress(message: string): void;
  session: string;
  workId: string;
  /** The session's other works when this one was delegated; absent when the host sent none. */
  workSnapshot?: readonly WorkSnapshotEntry[];
  /** The conversation up to the delegation's evidence cutoff; absent when the executor reads no timeline. */
  evidence?: Evidence;
}

export interface FunctionOutput {
  /** Structured output for clients and audits; never spoken as is. */
  data: unknown;
  /** One short spoken-style sentence, e.g. "It's 3:42 PM in Tokyo." */
  speech: string;
}

/**
 * A function the background harness can run for a delegation. The deterministic router matches the
 * query against `name`, `description`, `examples` and `keywords`, then asks `extract` for arguments;
 * `parameters` validates them (and, as JSON Schema, tells clients what the function takes).
 *
 * @example
 *   const echo: VenusFunction<{ text: string }> = {
 *     name: 'echo',
 *     description: 'Repeats what was said.',
 *     parameters: z.object({ text: z.string() }),
 *     examples: ['echo hello'],
 *     extract: (query) => (query.startsWith('echo ') ? { text: query.slice(5) } : null),
 *     run: async ({ text }) => ({ data: { text }, speech: text }),
 *   };
 */
export interface VenusFunction<A = unknown> {
  /** snake_case, unique within a registry. */
  readonly name: string;
  readonly description: string;
  readonly parameters: z.ZodType<A>;
  /** Default delivery policy for this function's results; a request's own policy wins. */
  readonly delivery?: DeliveryPolicy;
  /** Plain-language queries this function answers; router vocabulary and documentation. */
  readonly examples: readonly string[];
  /** Extra router vocabulary that would read oddly in the description (unit names, synonyms). */
  readonly keywords?: readonly string[];
  /** Pulls arguments out of plain language; null when the query does not carry what the function needs. */
  extract(query: string): A | null;
  run(args: A, ctx: FunctionContext): Promise<FunctionOutput>;
}

/** The description a client sees: parameters as JSON Schema instead of a zod schema. */
export interface FunctionDescription {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  delivery?: DeliveryPolicy;
  examples: readonly string[];
}

export const FUNCTION_NAME_PATTERN = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;

export function describeFunction(fn: VenusFunction): FunctionDescription {
  const description: FunctionDescription = {
    name: fn.name,
    description: fn.description,
    parameters: z.toJSONSchema(fn.parameters) as Record<string, unknown>,
    examples: fn.examples,
  };
  if (fn.delivery !== undefined) description.delivery = fn.delivery;
  return description;
}
