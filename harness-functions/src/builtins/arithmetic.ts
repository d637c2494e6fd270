import { VenusError } from '@venus/protocol';

type Token =
  | { kind: 'number'; value: number; text: string }
  | { kind: 'op'; text: '+' | '-' | '*' | '/' | '^' | '%' | 'of' }
  | { kind: 'paren'; text: '(' | ')' }
  | { kind: 'word'; text: string };

const WORD_OPERATORS: readonly (readonly [RegExp, string])[] = [
  [/\bmultiplied by\b|\btimes\b|×/g, ' * '],
  [/\bdivided by\b|÷/g, ' / '],
  [/\bto the power of\b|\braised to(?: the power of)?\b/g, ' ^ '],
  [/\bsquared\b/g, ' ^ 2 '],
  [/\bcubed\b/g, ' ^ 3 '],
  [/\bplus\b/g, ' + '],
  [/\bminus\b|−/g, ' - '],
  [/\bpercent\b/g, ' % '],
  [/(\d)\s*x\s*(?=[\d(.])/g, '$1 * '],
  [/(\d),(?=\d{3}(?!\d))/g, '$1'],
];

function tokenize(text: string): Token[] {
  let normalized = text.toLowerCase();
  for (const [pattern, replacement] of WORD_OPERATORS) normalized = normalized.replace(pattern, replacement);
  const tokens: Token[] = [];
  for (const match of normalized.matchAll(/\d+(?:\.\d+)?|\.\d+|[+\-*/^%()]|[a-z']+/g)) {
    const text = match[0];
    if (/^[\d.]/.test(text)) tokens.push({ kind: 'number', value: Number(text), text });
    else if (text === '(' || text === ')') tokens.push({ kind: 'paren', text });
    else if (text === 'of') tokens.push({ kind: 'op', text });
    else if (/^[+\-*/^%]$/.test(text)) tokens.push({ kind: 'op', text: text as '+' });
    else tokens.push({ kind: 'word', text });
  }
  return tokens;
}

/** Recursive descent over + - * / ^ % "of" and parentheses; `^` is right-associative and binds tighter than unary minus. */
class Parser {
  #at = 0;
  constructor(readonly tokens: readonly Token[]) {}

  parse(): number {
    const value = this.#expression();
    if (this.#at !== this.tokens.length) throw unreadable();
    return value;
  }

  #peek(): string | undefined {
    const token = this.tokens[this.#at];
    return token?.kind === 'op' || token?.kind === 'paren' ? token.text : undefined;
  }

  #expression(): number {
    let value = this.#term();
    for (let op = this.#peek(); op === '+' || op === '-'; op = this.#peek()) {
      this.#at++;
      const right = this.#term();
      value = op === '+' ? value + right : value - right;
    }
    return value;
  }

  #term(): number {
    let value = this.#factor();
    for (let op = this.#peek(); op === '*' || op === '/' || op === 'of'; op = this.#peek()) {
      this.#at++;
      const right = this.#factor();
      if (op === '/' && right === 0) throw new VenusError('invalid_arguments', "I can't divide by zero");
      value = op === '/' ? value / right : value * right;
    }
    return value;
  }

  #factor(): number {
    const op = this.#peek();
    if (op === '-' || op === '+') {
      this.#at++;
      const value = this.#factor();
      return op === '-' ? -value : value;
    }
    const base = this.#postfix();
    if (this.#peek() !== '^') return base;
    this.#at++;
    return base ** this.#factor();
  }

  #postfix(): number {
    let value = this.#primary();
    while (this.#peek() === '%') {
      this.#at++;
      value /= 100;
    }
    return value;
  }

  #primary(): number {
    const token = this.tokens[this.#at];
    if (token?.kind === 'number') {
      this.#at++;
      return token.value;
    }
    if (token?.kind === 'paren' && token.text === '(') {
      this.#at++;
      const value = this.#expression();
      if (this.#peek() !== ')') throw unreadable();
      this.#at++;
      return value;
    }
    throw unreadable();
  }
}

function unreadable(): VenusError {
  return new VenusError('invalid_arguments', "I couldn't read that calculation");
}

/** Evaluates an arithmetic expression without eval; throws VenusError('invalid_arguments') with a speakable message. */
export function evaluateArithmetic(expression: string): number {
  const tokens = tokenize(expression);
  if (tokens.length === 0 || tokens.some((token) => token.kind === 'word')) throw unreadable();
  const value = new Parser(tokens).parse();
  if (!Number.isFinite(value)) throw new VenusError('invalid_arguments', 'that number is too large for me');
  // Twelve significant digits hide binary noise such as 0.1 + 0.2 = 0.30000000000000004.
  return Number(value.toPrecision(12));
}

/**
 * The longest run of arithmetic in a sentence that parses ("what is 12% of 80?" -> "12 % of 80"),
 * or null when there is none. The run needs an operator: a lone number is not a calculation.
 */
export function extractArithmetic(query: string): string | null {
  const tokens = tokenize(query);
  let best: Token[] | null = null;
  let start = 0;
  for (let end = 0; end <= tokens.length; end++) {
    if (end < tokens.length && tokens[end]!.kind !== 'word') continue;
    const run = trimRun(tokens.slice(start, end));
    if (run.length > (best?.length ?? 0) && run.some((token) => token.kind === 'op') && parses(run)) best = run;
    start = end + 1;
  }
  return best === null ? null : best.map((token) => token.text).join(' ');
}

/** Drops a dangling "of" at either end ("the square of", "of 80" alone is not arithmetic). */
function trimRun(run: Token[]): Token[] {
  let from = 0;
  let to = run.length;
  while (from < to && run[from]!.text === 'of') from++;
  while (to > from && run[to - 1]!.text === 'of') to--;
  return run.slice(from, to);
}

function parses(run: readonly Token[]): boolean {
  try {
    new Parser(run).parse();
    return true;
  } catch {
    return false;
  }
}

const SPOKEN_OPERATORS: Record<string, string> = {
  '+': 'plus',
  '-': 'minus',
  '*': 'times',
  '/': 'divided by',
  '^': 'to the power of',
};

/** "12 % of 80" -> "12 percent of 80"; null when it would not read well aloud (parentheses, long chains). */
export function speakArithmetic(expression: string): string | null {
  const tokens = tokenize(expression);
  if (tokens.length > 9 || tokens.some((token) => token.kind === 'paren')) return null;
  return tokens
    .map((token, index) => {
      if (token.text === '%') return 'percent';
      const previous = tokens[index - 1];
      const unaryMinus =
        token.text === '-' && (previous === undefined || (previous.kind === 'op' && previous.text !== '%'));
      return unaryMinus ? 'negative' : (SPOKEN_OPERATORS[token.text] ?? token.text);
    })
    .join(' ');
}
