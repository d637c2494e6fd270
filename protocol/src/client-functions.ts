import { z } from 'zod';

/**
 * Client functions: tools a client declares for its own session (`session.update` `tools`). The
 * planner may pick one like any built-in or deployed function; instead of running it, the harness
 * hands back a call (`clientCall` on the result), the session host records `work.client_call`, the
 * edge shows the client a standard `function_call` item, and the client's `function_call_output`
 * comes back as the delegation's result. Each bound keeps one session's tools small enough to ride
 * on every config frame and delegation request (32 tools of 2,000 + 8,000 chars: under 320 KB).
 */
export const CLIENT_FUNCTION_LIMITS = {
  maxFunctions: 32,
  maxDescriptionChars: 2000,
  /** The parameters' JSON Schema, serialised. */
  maxParametersChars: 8000,
  maxArgumentsChars: 4000,
  /** What a client's `function_call_output` may carry. */
  maxOutputChars: 16_000,
  /** How long a call waits for the client's output before its work fails (the delegation timeout). */
  outputTimeoutMs: 180_000,
} as const;

/** OpenAI's tool name rule. */
export const ClientFunctionNameSchema = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a-z, A-Z, 0-9, _ or -, at most 64');

/**
 * A client function as the session carries it. `parameters` is the JSON Schema subset of deployed
 * functions (`ParametersSchema`), projected by the edge from what the client sent; here only its
 * shape and size are checked, so this module needs nothing but zod.
 */
export const ClientFunctionSchema = z.object({
  name: ClientFunctionNameSchema,
  description: z.string().max(CLIENT_FUNCTION_LIMITS.maxDescriptionChars),
  parameters: z
    .object({
      type: z.literal('object'),
      properties: z.record(z.string(), z.record(z.string(), z.unknown())),
      required: z.array(z.string()),
      additionalProperties: z.boolean(),
    })
    .refine(
      (p) => JSON.stringify(p).length <= CLIENT_FUNCTION_LIMITS.maxParametersChars,
      `parameters over ${CLIENT_FUNCTION_LIMITS.maxParametersChars} characters`,
    ),
});
export type ClientFunction = z.infer<typeof ClientFunctionSchema>;

export const ClientFunctionsSchema = z.array(ClientFunctionSchema).max(CLIENT_FUNCTION_LIMITS.maxFunctions);

/** A planned call of a client function: what the harness hands back instead of running it. */
export const ClientCallSchema = z.object({
  name: ClientFunctionNameSchema,
  /** The arguments as a JSON object text, as OpenAI's `function_call` items carry them. */
  arguments: z.string().max(CLIENT_FUNCTION_LIMITS.maxArgumentsChars),
});
export type ClientCall = z.infer<typeof ClientCallSchema>;

/** The name of the call a session with client delegation gets for every delegation: `{ query }`. */
export const CLIENT_DELEGATION = 'delegation';

/** The call id the client sees for a work's client call: one call per work, so derived from it. */
export function clientCallId(workId: string): string {
  return `call_${workId}`;
}

/**
 * What the assistant says of a client function's output: a string as it is; a JSON object or
 * array as its leaf values, `key: value` joined, so the reply carries the facts without braces.
 * The session host bounds the result text (`maxResultChars`) after this.
 *
 * @example
 *   spokenClientOutput('{"status":"shipped","eta":"Friday"}'); // "status: shipped, eta: Friday"
 *   spokenClientOutput('It shipped on Monday.');               // "It shipped on Monday."
 */
export function spokenClientOutput(output: string): string {
  const trimmed = output.trim();
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return trimmed;
  }
  if (typeof value === 'string') return value.trim();
  if (value === null || typeof value !== 'object') return trimmed;
  const parts: string[] = [];
  collectLeaves(value, '', parts, 0);
  return parts.join(', ');
}

/** Leaves of a parsed JSON value, `path: value`; 8 levels and 64 leaves at most. */
function collectLeaves(value: unknown, path: string, out: string[], depth: number): void {
  if (out.length >= 64) return;
  if (value === null || typeof value !== 'object' || depth >= 8) {
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    out.push(path === '' ? text : `${path}: ${text}`);
    return;
  }
  for (const [key, inner] of Object.entries(value)) {
    const name = Array.isArray(value) ? path : key.replaceAll('_', ' ');
    collectLeaves(inner, name, out, depth + 1);
  }
}
