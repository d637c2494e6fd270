import { DELEGATION_LIMITS } from '@venus/protocol';
import { type RequestIntent, sanitizeUserText } from './intents.ts';

/**
 * What the reference model says. Replies to requests it cannot answer itself carry one hidden
 * `<delegate>` span (a plain-language request for the background harness) after the first sentence;
 * the host strips the span from display and speech, and so does the synthesiser here.
 *
 * @example
 *   replyTo({ kind: 'weather', city: 'Paris' });
 *   // "Let me check the weather in Paris. <delegate>What is the weather in Paris right now?</delegate>It may take…"
 */
const PATIENCE = 'It may take a few seconds, so bear with me; meanwhile, feel free to ask me something else.';

export const GREETING_REPLY =
  'Hello! I can check the weather or the time anywhere in the world, and work out calculations and conversions. What would you like?';
export const RESUME_OFFER = 'Shall I go back to what I was saying before?';
export const RESUME_DECLINED = 'Alright.';

const DELEGATE = /<delegate>[\s\S]*?<\/delegate>/g;

function delegate(query: string): string {
  return `<delegate>${query.slice(0, DELEGATION_LIMITS.maxQueryChars)}</delegate>`;
}

function query(intent: RequestIntent): string {
  switch (intent.kind) {
    case 'weather':
      return `What is the weather in ${intent.city} ${intent.when === 'tomorrow' ? 'tomorrow' : 'right now'}?`;
    case 'time':
      return `What time is it in ${intent.city}?`;
    case 'calc':
      return intent.expression;
  }
}

export function replyTo(intent: RequestIntent): string {
  switch (intent.kind) {
    case 'weather':
      return `Let me check the weather in ${intent.city}${intent.when === 'tomorrow' ? ' for tomorrow' : ''}. ${delegate(query(intent))}${PATIENCE}`;
    case 'time':
      return `Let me check the time in ${intent.city}. ${delegate(query(intent))}${PATIENCE}`;
    case 'calc':
      return `Let me work that out. ${delegate(query(intent))}`;
  }
}

/**
 * A request the model cannot answer itself goes to the harness as the user put it: one of its
 * functions may fit (the client's own tools among them), and if none does, the harness's apology
 * is what gets spoken, so the user never meets silence.
 */
export function lookInto(text: string): string {
  return `Let me look into that. ${delegate(sanitizeUserText(text))}${PATIENCE}`;
}

/** The regenerated continuation after a correction: acknowledges the new slot, delegates again. */
export function repairReply(intent: RequestIntent): string {
  if (intent.kind === 'calc') return `Sorry, let me redo that. ${delegate(query(intent))}Working it out now.`;
  return `Sorry — ${intent.city}, then. ${delegate(query(intent))}Checking now.`;
}

export function askForCity(forIntent: 'weather' | 'time'): string {
  return forIntent === 'weather'
    ? 'Which city would you like the weather for?'
    : 'Which city would you like the time in?';
}

/** What is displayed and spoken: the text without its hidden delegate span. */
export function visibleText(text: string): string {
  return text.replace(DELEGATE, '').replace(/\s+/g, ' ').trim();
}

/** Said after a cancel that arrives once the assistant has stopped talking. */
export const CANCELLED_REPLY = 'Okay, I have cancelled that.';

/** Said when the recogniser heard speech but its words were probably not what was said. */
export const UNCLEAR_REPLY = 'Sorry, I did not catch that. Could you say it again?';

/** The answer to "what did you just tell me?": what the user last heard, restored history included. */
export function recallReply(said: string | null): string {
  return said ? `I said: ${said}` : 'I have not said anything yet.';
}

/** Which city question `heard` is the start of, once it goes past the words both questions share. */
export function heardCityQuestion(heard: string): 'weather' | 'time' | null {
  const text = heard.trim();
  const shared = 'Which city would you like the '.length;
  if (text.length <= shared) return null;
  if (askForCity('weather').startsWith(text)) return 'weather';
  if (askForCity('time').startsWith(text)) return 'time';
  return null;
}
