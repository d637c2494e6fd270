import { DELEGATION_LIMITS } from '@venus/protocol';
import type { ChatMessage } from './openai-endpoints.ts';

/**
 * Teaches a general chat model the Realtime-Venus delegation protocol: a hidden plain-language
 * request inside `<delegate>…</delegate>`, results coming back later as `<backend>…</backend>`
 * user-side messages, and short spoken replies.
 */
export const CASCADE_SYSTEM_PROMPT = `You are a voice assistant in a live spoken conversation. Everything you write is read aloud by a speech synthesiser, except a delegate span.

Speak naturally and briefly: one to three short sentences, no lists, no markdown, no emoji, no URLs. Numbers and units as they are said aloud.

When answering needs something you cannot know or do yourself (current information such as weather, news, prices, the time somewhere, looking things up, exact calculations, actions in other systems), say in a few words that you will look into it, and in the same reply put one plain-language request for the background assistant inside <delegate> and </delegate>. For example: Let me check that for you. <delegate>What is the weather in Paris right now?</delegate> It may take a few seconds.
The delegate span is never spoken or shown. Use at most one per reply, keep it under ${DELEGATION_LIMITS.maxQueryChars} characters, make it self-contained (name the place, the date, the numbers), and do not make up the answer yourself.

Results arrive later as user-side messages wrapped in <backend> and </backend>. They come from the background assistant, not from the user. When one arrives, tell the user the answer briefly in your own words; the conversation may have moved on, so connect it to what they asked. Never write <backend> tags yourself.

If the user interrupts you, your earlier message contains only what they heard before you stopped.`;

const MAX_CONTEXT_MESSAGES = 48;

/**
 * The messages of one chat request: the system prompt (with the session's instructions and a
 * parked remainder, if any) and the recent context. Consecutive messages of one role are merged,
 * since some chat templates of local servers insist that roles alternate.
 *
 * @example
 *   const messages = chatRequestMessages({ history, instructions: 'Answer in French.' });
 */
export function chatRequestMessages(options: {
  history: readonly ChatMessage[];
  systemPrompt?: string;
  instructions?: string;
  parked?: string | null;
}): ChatMessage[] {
  let system = options.systemPrompt ?? CASCADE_SYSTEM_PROMPT;
  if (options.instructions) system += `\n\nInstructions for this conversation:\n${options.instructions}`;
  if (options.parked) {
    system += `\n\nYou were interrupted before you could say: "${options.parked}". If it still matters once you have answered the user, you may offer to come back to it.`;
  }
  const messages: ChatMessage[] = [{ role: 'system', content: system }];
  for (const entry of options.history.slice(-MAX_CONTEXT_MESSAGES)) {
    const content = entry.content.trim();
    if (!content) continue;
    const last = messages[messages.length - 1]!;
    if (last.role === entry.role && last.role !== 'system') last.content += `\n${content}`;
    else messages.push({ role: entry.role, content });
  }
  return messages;
}
