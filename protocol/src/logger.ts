/**
 * One structured logger for every process: pino, JSON lines on stderr (stdout stays free for a
 * program's real output, e.g. the bench's tables), one child per component.
 *
 * Personal data (user text, transcripts, audio, api keys, secrets) may be logged only under marked
 * keys, so the rule can be enforced mechanically:
 * - everything under a `pii` key is replaced by `[redacted]` unless `VENUS_LOG_PII=1` (a developer
 *   debugging on their own machine);
 * - `authorization`, `apiKey`/`api_key`, `password`, `token`, `cookie` and any key starting with
 *   `secret` are always redacted, at any depth.
 *
 * The level comes from `VENUS_LOG_LEVEL` (default `info`); under vitest it is `silent` unless
 * `VENUS_LOG_LEVEL` is set, so test output stays readable. The logger reads these two variables
 * itself because it must work before (and while) a process validates its settings; the settings
 * modules validate the same names with {@link LOG_LEVELS} so a bad value still fails start.
 *
 * @example
 *   const log = createLogger('edge.relay', { worker: url });
 *   log.warn({ err, session, pii: { text } }, 'relay frame rejected');
 */
import { type DestinationStream, type Logger as PinoLogger, pino } from 'pino';

export type Logger = PinoLogger;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const REDACTED = '[redacted]';

/** Keys whose value is a credential wherever they appear. Compared lower-cased. */
const ALWAYS_SECRET = new Set(['authorization', 'apikey', 'api_key', 'x-api-key', 'password', 'token', 'cookie']);
const MAX_DEPTH = 8;

function isSecretKey(key: string): boolean {
  const lower = key.toLowerCase();
  return ALWAYS_SECRET.has(lower) || lower.startsWith('secret');
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * The redaction rule as a pure function: a copy of `value` with marked keys replaced. Only plain
 * objects and arrays are walked; errors, buffers and class instances go to pino's serializers as
 * they are (an Error's message is the code's, not the user's).
 */
export function redactLogFields<T>(value: T, options: { pii: boolean }): T {
  return walk(value, options.pii, 0) as T;
}

function walk(value: unknown, pii: boolean, depth: number): unknown {
  if (depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item) => walk(item, pii, depth + 1));
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (isSecretKey(key)) out[key] = REDACTED;
    else if (key === 'pii' && !pii) out[key] = REDACTED;
    else out[key] = walk(field, pii, depth + 1);
  }
  return out;
}

export interface RootLoggerOptions {
  level: LogLevel;
  /** Show what is under `pii` keys (VENUS_LOG_PII=1). Credentials stay redacted regardless. */
  pii: boolean;
  /** Where the JSON lines go; stderr when absent. */
  destination?: DestinationStream;
}

/** A root logger with explicit options; processes use {@link createLogger}, tests use this. */
export function createRootLogger(options: RootLoggerOptions): Logger {
  const redact = (fields: Record<string, unknown>) => redactLogFields(fields, { pii: options.pii });
  const pinoOptions = {
    level: options.level,
    base: { pid: envProcess()?.pid },
    // The walk covers log fields at any depth; pino does not run a bindings formatter for
    // `child()` bindings, so top-level marked keys there are redacted by pino's own paths.
    formatters: { log: redact },
    redact: { paths: bindingPaths(options.pii), censor: REDACTED },
  };
  const destination = options.destination ?? stderrDestination();
  return destination ? pino(pinoOptions, destination) : pino(pinoOptions);
}

/** Top-level keys pino itself censors, which reaches `child()` bindings too. */
function bindingPaths(pii: boolean): string[] {
  const keys = ['authorization', 'Authorization', 'apiKey', 'api_key', 'password', 'token', 'cookie'];
  keys.push('secret', 'secrets', 'secretKey', 'secretsKey', '["x-api-key"]');
  return pii ? keys : [...keys, 'pii'];
}

/** Synchronous stderr, so the last lines before a crash or `process.exit` are not lost. */
function stderrDestination(): DestinationStream | undefined {
  // The Workers bundle resolves pino's browser build, which has no destination and logs to console.
  if (typeof pino.destination !== 'function' || !envProcess()?.stderr) return undefined;
  return pino.destination({ fd: 2, sync: true });
}

interface ProcessLike {
  env: Record<string, string | undefined>;
  pid?: number;
  stderr?: unknown;
}

function envProcess(): ProcessLike | undefined {
  return (globalThis as { process?: ProcessLike }).process;
}

/** The level and PII switch this process's environment asks for (see the module doc). */
export function loggingFromEnv(env: Record<string, string | undefined>): { level: LogLevel; pii: boolean } {
  const requested = env.VENUS_LOG_LEVEL?.trim().toLowerCase();
  const valid = (LOG_LEVELS as readonly string[]).includes(requested ?? '') ? (requested as LogLevel) : undefined;
  // An invalid value falls back here; the process's settings module rejects it at start.
  const level = valid ?? (env.VITEST ? 'silent' : 'info');
  return { level, pii: env.VENUS_LOG_PII === '1' };
}

let root: Logger | undefined;

function rootLogger(): Logger {
  root ??= createRootLogger(loggingFromEnv(envProcess()?.env ?? {}));
  return root;
}

/** A logger for one component (`edge.relay`, `harness.bullmq`, ...), with optional fixed fields. */
export function createLogger(component: string, bindings?: Record<string, unknown>): Logger {
  return rootLogger().child({ component, ...bindings });
}
