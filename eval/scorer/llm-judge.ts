import { z } from 'zod';
import type { Behaviour } from './behaviour.ts';

/**
 * Optional LLM judge over any OpenAI-compatible chat-completions endpoint, off by default. It sees
 * the texts (context, the overlapping speech, what the assistant said before and after) and labels
 * the assistant's reaction like Full-Duplex-Bench v1.5's judge does; the rule-based label is kept
 * beside it. Configure with EVAL_JUDGE_URL (base URL, e.g. https://api.openai.com/v1),
 * EVAL_JUDGE_MODEL and optionally EVAL_JUDGE_API_KEY, and pass `--judge llm`.
 *
 * @example
 *   const judge = judgeFromEnv(process.env);
 *   if (judge) label = await judgeBehaviour(judge, { set, context, overlap, before, after });
 */
export interface JudgeConfig {
  url: string;
  model: string;
  apiKey?: string;
}

export interface JudgeInput {
  set: string;
  context: string;
  overlap: string;
  before: string;
  after: string;
}

export function judgeFromEnv(env: NodeJS.ProcessEnv): JudgeConfig | null {
  const url = env.EVAL_JUDGE_URL;
  const model = env.EVAL_JUDGE_MODEL;
  if (!url || !model) return null;
  return { url: url.replace(/\/+$/, ''), model, ...(env.EVAL_JUDGE_API_KEY ? { apiKey: env.EVAL_JUDGE_API_KEY } : {}) };
}

const AnswerSchema = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string().nullable() }) })).min(1),
});

const PROMPT = `You judge a voice assistant's reaction to speech that overlapped its own.
Labels:
- respond: after the overlap the assistant stopped what it was saying and addressed the overlapping speech.
- resume: the assistant went on with what it was saying (or with its own earlier business), not addressing the overlapping speech.
- other: it stopped and said nothing relevant, or the reaction cannot be told.
Answer with one JSON object: {"label": "respond" | "resume" | "other"}.`;

export async function judgeBehaviour(config: JudgeConfig, input: JudgeInput, timeoutMs = 30_000): Promise<Behaviour> {
  const user = [
    `Scenario: ${input.set}`,
    `User's earlier turn: ${input.context || '(none)'}`,
    `Overlapping speech: ${input.overlap || '(unknown)'}`,
    `Assistant before the overlap: ${input.before || '(silent)'}`,
    `Assistant after the overlap: ${input.after || '(silent)'}`,
  ].join('\n');
  const response = await fetch(`${config.url}/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {}),
    },
    body: JSON.stringify({
      model: config.model,
      temperature: 0,
      messages: [
        { role: 'system', content: PROMPT },
        { role: 'user', content: user },
      ],
    }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!response.ok) throw new Error(`judge endpoint answered ${response.status}`);
  const content = AnswerSchema.parse(await response.json()).choices[0]?.message.content ?? '';
  const match = /"label"\s*:\s*"(respond|resume|other)"/.exec(content) ?? /\b(respond|resume|other)\b/.exec(content);
  return (match?.[1] as Behaviour | undefined) ?? 'other';
}
