import type { VenusFunction } from './function-definition.ts';
import type { Plan, Planner } from './planner.ts';

const STOPWORDS = new Set(
  (
    'a an the is are was were be been am it its i me my you your we our us they them he she this that these ' +
    'those there here what whats which who how much many do does did can could would will shall should may ' +
    'might please of to in on at for from into onto by with and or but if then so than as about like just ' +
    'get give show let know want need some any s t d ll re ve m o'
  ).split(' '),
);

/** Lowercase words (lightly stemmed) and arithmetic symbols; bare numbers carry no intent, so they are dropped. */
export function routerTokens(text: string): string[] {
  const normalized = text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
  const tokens: string[] = [];
  for (const match of normalized.matchAll(/[a-z0-9]+|[+*/^%×÷]/g)) {
    const raw = match[0];
    if (/^[0-9]+$/.test(raw) || STOPWORDS.has(raw)) continue;
    tokens.push(stem(raw));
  }
  return tokens;
}

function stem(word: string): string {
  if (word.length > 5 && word.endsWith('ing')) return word.slice(0, -3);
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

export interface RouterPlannerOptions {
  /** Candidates scoring below this are never asked to extract. Default: anything above zero. */
  minScore?: number;
}

/**
 * Deterministic planner: scores every function by the words it shares with the query (its name,
 * description, examples and keywords; words that many functions share count for less), then asks
 * the candidates, best first, to extract arguments and keeps the first whose arguments pass its
 * zod schema. No model, no network: the same query always gets the same plan.
 *
 * @example
 *   const plan = await new RouterPlanner().plan('what time is it in Tokyo', createBuiltinFunctions());
 *   // { functionName: 'world_clock', args: { city: 'Tokyo' } }
 */
export class RouterPlanner implements Planner {
  readonly #minScore: number;
  readonly #vocabularies = new WeakMap<VenusFunction, ReadonlySet<string>>();

  constructor(options: RouterPlannerOptions = {}) {
    this.#minScore = options.minScore ?? Number.EPSILON;
  }

  async plan(query: string, functions: readonly VenusFunction[]): Promise<Plan | null> {
    for (const { fn } of this.rank(query, functions)) {
      const args = fn.extract(query);
      if (args === null) continue;
      const parsed = fn.parameters.safeParse(args);
      if (parsed.success) return { functionName: fn.name, args: parsed.data };
    }
    return null;
  }

  /** Candidates above the minimum score, best first; ties keep registration order. */
  rank(query: string, functions: readonly VenusFunction[]): { fn: VenusFunction; score: number }[] {
    const vocabularies = functions.map((fn) => this.#vocabulary(fn));
    const documentFrequency = new Map<string, number>();
    for (const vocabulary of vocabularies) {
      for (const token of vocabulary) documentFrequency.set(token, (documentFrequency.get(token) ?? 0) + 1);
    }
    const queryTokens = new Set(routerTokens(query));
    const ranked: { fn: VenusFunction; score: number }[] = [];
    functions.forEach((fn, index) => {
      const vocabulary = vocabularies[index]!;
      let score = 0;
      for (const token of queryTokens) {
        if (!vocabulary.has(token)) continue;
        score += Math.log(1 + functions.length / (documentFrequency.get(token) ?? 1));
      }
      if (score >= this.#minScore) ranked.push({ fn, score });
    });
    return ranked.sort((a, b) => b.score - a.score);
  }

  #vocabulary(fn: VenusFunction): ReadonlySet<string> {
    let vocabulary = this.#vocabularies.get(fn);
    if (vocabulary === undefined) {
      const text = [fn.name.replaceAll('_', ' '), fn.description, ...fn.examples, ...(fn.keywords ?? [])].join(' ');
      vocabulary = new Set(routerTokens(text));
      this.#vocabularies.set(fn, vocabulary);
    }
    return vocabulary;
  }
}
