import { DELEGATION_LIMITS, stripReservedTags, type VenusError } from '@venus/protocol';
import type { Evidence } from './evidence.ts';

export interface OralizeInput {
  functionName?: string;
  /** The function's own spoken sentence, when it succeeded. */
  speech?: string;
  data?: unknown;
  ok: boolean;
  error?: VenusError;
  /** The conversation up to the evidence cutoff, when the executor reads the timeline (e.g. to match the user's wording). */
  evidence?: Evidence;
}

/** Turns a function's outcome into the short reply the assistant speaks. */
export interface Oralizer {
  oralize(input: OralizeInput): string;
}

export interface DefaultOralizerOptions {
  maxChars?: number;
}

/**
 * Keeps replies speakable (it does not use the evidence: a function's own sentence already answers the query): one line, no reserved protocol tags, never longer than a result may be,
 * and failures as a plain apology with a reason a listener understands.
 *
 * @example
 *   new DefaultOralizer().oralize({ ok: false, error: new VenusError('function_timeout', 'timed out') });
 *   // "Sorry, I couldn't get that: it took too long."
 */
export class DefaultOralizer implements Oralizer {
  readonly #maxChars: number;

  constructor(options: DefaultOralizerOptions = {}) {
    this.#maxChars = Math.min(options.maxChars ?? DELEGATION_LIMITS.maxResultChars, DELEGATION_LIMITS.maxResultChars);
  }

  oralize(input: OralizeInput): string {
    if (input.ok) {
      const speech = clean(input.speech ?? '');
      return this.#fit(speech === '' ? 'Done.' : speech);
    }
    return this.#fit(`Sorry, I couldn't get that: ${sentence(failureReason(input.error))}`);
  }

  #fit(text: string): string {
    if (text.length <= this.#maxChars) return text;
    const cut = text.slice(0, this.#maxChars - 1);
    const lastSpace = cut.lastIndexOf(' ');
    return `${(lastSpace > this.#maxChars / 2 ? cut.slice(0, lastSpace) : cut).trimEnd()}…`;
  }
}

/** What a listener hears as the reason. Functions throw VenusErrors with speakable messages. */
function failureReason(error: VenusError | undefined): string {
  if (error === undefined) return 'something went wrong';
  switch (error.code) {
    case 'internal_error':
      return 'something went wrong';
    case 'function_not_found':
      return "I don't have a way to do that yet";
    case 'function_timeout':
      return 'it took too long';
    default:
      return clean(error.message) || 'something went wrong';
  }
}

function clean(text: string): string {
  return stripReservedTags(text).replace(/\s+/g, ' ').trim();
}

function sentence(text: string): string {
  return /[.!?…]$/.test(text) ? text : `${text}.`;
}
