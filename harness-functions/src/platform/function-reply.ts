import { FunctionReplySchema, type InvocationError } from '@venus/protocol';
import type { z } from 'zod';

export type FunctionReply = z.infer<typeof FunctionReplySchema>;

/**
 * What a function's returned value means: a string is the speech; `{speech?, data?}` is a reply;
 * with `strict` off (modules) anything else is taken as `data`, with it on (HTTP endpoints, whose
 * answers are a wire contract) anything else is `invalid_output`.
 */
export function parseReply(
  value: unknown,
  options: { strict: boolean },
): { ok: true; reply: FunctionReply } | { ok: false; error: InvocationError } {
  if (value === null || value === undefined) return { ok: true, reply: {} };
  if (typeof value === 'string') value = { speech: value };
  const looksLikeReply =
    typeof value === 'object' &&
    !Array.isArray(value) &&
    Object.keys(value as object).every((key) => key === 'speech' || key === 'data');
  if (looksLikeReply || options.strict) {
    const parsed = FunctionReplySchema.safeParse(value);
    if (parsed.success) return { ok: true, reply: parsed.data };
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      error: {
        code: 'invalid_output',
        message:
          `the reply must be {speech?: string (≤ 3000 chars), data?: any}: ${issue?.path.join('.') || 'reply'} ${issue?.message ?? ''}`.trim(),
      },
    };
  }
  return { ok: true, reply: { data: value } };
}
