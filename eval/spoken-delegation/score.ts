import type { Plan } from '@venus/harness-functions';
import type { ExpectedCall, RequestTopic } from './requests.ts';

/** How a spoken request ended, from the harness's point of view. */
export type Verdict = 'right' | 'wrong_args' | 'wrong_function' | 'no_function' | 'no_delegation';
export const VERDICTS: readonly Verdict[] = ['right', 'wrong_args', 'wrong_function', 'no_function', 'no_delegation'];

/** The "got" column of the confusion matrix when no function was chosen. */
export const NO_FUNCTION = '(planner: none)';
export const NO_DELEGATION = '(no delegation)';

/** One scored request: what was said and expected, what was heard, delegated and planned. */
export interface ScoredTrial {
  id: string;
  speaker: string;
  engine: string;
  band: 'clean' | 'telephone';
  topic: RequestTopic;
  text: string;
  expected: ExpectedCall;
  transcript: string;
  inGrammar: boolean;
  query: string | null;
  plan: Plan | null;
  answered: boolean;
  verdict: Verdict;
  words: { right: number; total: number; errors: number };
}

/**
 * Argument values as compared: strings without accents, case or whitespace ("São  Paulo" =
 * "sao paulo", "12+7" = "12 + 7"); numbers exactly; objects key by key (no extra or missing keys).
 */
export function normaliseArgs(value: unknown): unknown {
  if (typeof value === 'string') return value.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().replace(/\s+/g, '');
  if (Array.isArray(value)) return value.map(normaliseArgs);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, normaliseArgs(v)]),
    );
  return value;
}

export function sameArgs(a: unknown, b: unknown): boolean {
  return JSON.stringify(normaliseArgs(a)) === JSON.stringify(normaliseArgs(b));
}

export function verdictOf(expected: ExpectedCall, query: string | null, plan: Plan | null): Verdict {
  if (query === null) return 'no_delegation';
  if (plan === null) return 'no_function';
  if (plan.functionName !== expected.functionName) return 'wrong_function';
  return sameArgs(plan.args, expected.args) ? 'right' : 'wrong_args';
}

/** Words as scored: lower case, apostrophes dropped ("what's" = "whats"), anything else a separator. */
export function scoredWords(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/['’]/g, '')
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== '');
}

/**
 * Word accuracy of a transcript against what was said: reference words minus substitutions and
 * deletions (Levenshtein alignment over words), and all errors (insertions too) as WER counts them.
 */
export function wordScore(reference: string, hypothesis: string): { right: number; total: number; errors: number } {
  const ref = scoredWords(reference);
  const hyp = scoredWords(hypothesis);
  // Each cell: [edits, substitutions + deletions].
  let previous: [number, number][] = hyp.map((_, j) => [j + 1, 0]);
  previous.unshift([0, 0]);
  for (let i = 1; i <= ref.length; i++) {
    const row: [number, number][] = [[i, i]];
    for (let j = 1; j <= hyp.length; j++) {
      const same = ref[i - 1] === hyp[j - 1];
      const diag = previous[j - 1]!;
      const up = previous[j]!;
      const left = row[j - 1]!;
      const candidates: [number, number][] = [
        [diag[0] + (same ? 0 : 1), diag[1] + (same ? 0 : 1)],
        [up[0] + 1, up[1] + 1],
        [left[0] + 1, left[1]],
      ];
      row.push(candidates.reduce((a, b) => (b[0] < a[0] || (b[0] === a[0] && b[1] < a[1]) ? b : a)));
    }
    previous = row;
  }
  const [errors, missed] = previous[hyp.length]!;
  return { right: ref.length - missed, total: ref.length, errors };
}

/** Counts per verdict, word totals and the rate of right calls for a group of trials. */
export interface GroupScore {
  n: number;
  counts: Record<Verdict, number>;
  rightRate: number;
  /** Right calls whose function also answered (false: e.g. a city the weather sample lacks). */
  answered: number;
  /** Failures whose transcript had a word wrong (the recogniser's), and those heard word for word. */
  failedMisheard: number;
  failedHeardRight: number;
  wordAccuracy: number;
  wordErrorRate: number;
}

export function scoreGroup(trials: readonly ScoredTrial[]): GroupScore {
  const counts = Object.fromEntries(VERDICTS.map((v) => [v, 0])) as Record<Verdict, number>;
  let right = 0;
  let total = 0;
  let errors = 0;
  for (const t of trials) {
    counts[t.verdict]++;
    right += t.words.right;
    total += t.words.total;
    errors += t.words.errors;
  }
  const failed = trials.filter((t) => t.verdict !== 'right');
  return {
    n: trials.length,
    counts,
    rightRate: trials.length === 0 ? 0 : counts.right / trials.length,
    answered: trials.filter((t) => t.verdict === 'right' && t.answered).length,
    failedMisheard: failed.filter((t) => t.words.errors > 0).length,
    failedHeardRight: failed.filter((t) => t.words.errors === 0).length,
    wordAccuracy: total === 0 ? 0 : right / total,
    wordErrorRate: total === 0 ? 0 : errors / total,
  };
}

/** Expected function (rows) x what the harness chose (columns), including "no function" and "no delegation". */
export function confusion(trials: readonly ScoredTrial[]): { rows: string[]; columns: string[]; cells: number[][] } {
  const got = (t: ScoredTrial) =>
    t.query === null ? NO_DELEGATION : t.plan === null ? NO_FUNCTION : t.plan.functionName;
  const rows = [...new Set(trials.map((t) => t.expected.functionName))].sort();
  const chosen = [...new Set(trials.map(got))].filter((c) => c !== NO_FUNCTION && c !== NO_DELEGATION);
  const columns = [...new Set([...rows, ...chosen.sort()]), NO_FUNCTION, NO_DELEGATION];
  const cells = rows.map((row) =>
    columns.map((column) => trials.filter((t) => t.expected.functionName === row && got(t) === column).length),
  );
  return { rows, columns, cells };
}
