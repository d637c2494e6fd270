import { VenusError } from '@venus/protocol';
import { z } from 'zod';
import { type Evidence, evidenceTranscript } from './evidence.ts';
import { describeFunction, type VenusFunction } from './function-definition.ts';
import type { Plan, PlanContext, Planner } from './planner.ts';

export interface LlmPlannerOptions {
  /** An OpenAI-compatible API root, e.g. `https://api.openai.com/v1` or a local server's `/v1`. */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** One planning call at most this long (default 8 s). */
  timeoutMs?: number;
  /** Asked instead when the model cannot be reached or answers nonsense (e.g. a RouterPlanner). */
  fallback?: Planner;
  fetch?: typeof fetch;
}

const SYSTEM = [
  'You route one request from a voice assistant to a tool.',
  'Call exactly one of the tools with arguments that follow its schema, taken from the request.',
  'If no tool can answer the request, do not call any tool and answer with the word none.',
  'When the conversation so far is given, use it to fill in what the request leaves implicit.',
].join(' ');

const CompletionSchema = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullable().optional(),
          tool_calls: z
            .array(
              z.object({
                type: z.literal('function'),
                function: z.object({ name: z.string(), arguments: z.string() }),
              }),
            )
            .optional(),
        }),
      }),
    )
    .min(1),
});

/**
 * A model-backed planner: offers the functions to an OpenAI-compatible chat model as tools and
 * takes its one tool call as the plan (arguments are checked against the function's schema by the
 * runner, as for any planner). No tool call means nothing fits. When the endpoint fails, times out
 * or answers something that is not a call of an offered function, the `fallback` planner decides,
 * or the failure is reported as `function_failed`.
 *
 * @example
 *   const planner = new LlmPlanner({ baseUrl: 'http://127.0.0.1:8000/v1', model: 'qwen2.5-7b-instruct',
 *     fallback: new RouterPlanner() });
 *   const runner = new DelegationRunner({ registry, planner });
 */
export class LlmPlanner implements Planner {
  readonly #options: LlmPlannerOptions;
  readonly #fetch: typeof fetch;

  constructor(options: LlmPlannerOptions) {
    this.#options = options;
    this.#fetch = options.fetch ?? globalThis.fetch;
  }

  async plan(query: string, functions: readonly VenusFunction[], context: PlanContext = {}): Promise<Plan | null> {
    if (functions.length === 0) return null;
    let answer: Plan | null;
    try {
      answer = await this.#ask(query, functions, context.evidence);
    } catch (error) {
      if (this.#options.fallback) return this.#options.fallback.plan(query, functions, context);
      throw error instanceof VenusError ? error : new VenusError('function_failed', `planner: ${String(error)}`);
    }
    return answer;
  }

  async #ask(query: string, functions: readonly VenusFunction[], evidence: Evidence | undefined): Promise<Plan | null> {
    const { baseUrl, model, apiKey, timeoutMs = 8000 } = this.#options;
    const tools = functions.map((fn) => {
      const { name, description, parameters } = describeFunction(fn);
      return { type: 'function', function: { name, description, parameters } };
    });
    const response = await this.#fetch(`${baseUrl.replace(/\/+$/, '')}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
      body: JSON.stringify({
        model,
        messages: [{ role: 'system', content: SYSTEM }, ...conversation(evidence), { role: 'user', content: query }],
        tools,
        tool_choice: 'auto',
        temperature: 0,
      }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) throw new VenusError('function_failed', `planner: the model answered HTTP ${response.status}`);
    const parsed = CompletionSchema.safeParse(await response.json());
    if (!parsed.success) throw new VenusError('function_failed', 'planner: the model answered an unexpected shape');
    const call = parsed.data.choices[0]!.message.tool_calls?.[0]?.function;
    if (call === undefined) return null;
    if (!functions.some((fn) => fn.name === call.name)) {
      throw new VenusError('function_failed', `planner: the model called "${call.name}", which was not offered`);
    }
    let args: unknown;
    try {
      args = JSON.parse(call.arguments || '{}');
    } catch {
      throw new VenusError('function_failed', 'planner: the model gave arguments that are not JSON');
    }
    return { functionName: call.name, args };
  }
}

/** The evidence transcript as one context message (bounded by EVIDENCE_LIMITS), or nothing. */
function conversation(evidence: Evidence | undefined): { role: 'system'; content: string }[] {
  const lines = evidence === undefined ? '' : evidenceTranscript(evidence);
  return lines === '' ? [] : [{ role: 'system', content: `The conversation so far:\n${lines}` }];
}

/**
 * An LlmPlanner from VENUS_PLANNER_BASE_URL + VENUS_PLANNER_MODEL (+ VENUS_PLANNER_API_KEY), falling
 * back to `fallback` when the model fails; undefined when those are not set.
 */
export function llmPlannerFromEnv(env: Record<string, string | undefined>, fallback: Planner): LlmPlanner | undefined {
  const baseUrl = env.VENUS_PLANNER_BASE_URL;
  const model = env.VENUS_PLANNER_MODEL;
  if (!baseUrl || !model) return undefined;
  return new LlmPlanner({
    baseUrl,
    model,
    ...(env.VENUS_PLANNER_API_KEY ? { apiKey: env.VENUS_PLANNER_API_KEY } : {}),
    fallback,
  });
}
