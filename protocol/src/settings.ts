/**
 * Process settings: one catalogue of the `VENUS_*` environment variables, their zod schemas and
 * the older names still accepted, from which each process picks its own (edge, gpu-worker, harness,
 * `npm start`). Each process reads `process.env` in one settings module only, through
 * {@link readSettings}; a bad value stops the start with an `invalid_settings` error that names the
 * variable.
 *
 * Naming: every setting is `VENUS_<NAME>`. The names used before (`REDIS_URL`, `PORT`, `HOST`, ...
 * see {@link SETTING_ALIASES}) are still read when the `VENUS_` name is unset; setting both to
 * different values is an error.
 *
 * @example
 *   const StartSettings = pickSettings(['VENUS_PORT', 'VENUS_HOST', 'VENUS_REDIS_URL']);
 *   const settings = readSettings('npm start', StartSettings, process.env);
 */
import { z } from 'zod';
import { VenusError } from './errors.ts';
import { LOG_LEVELS } from './logger.ts';

const port = (fallback: number) => z.coerce.number().int().min(0).max(65_535).default(fallback);
const positiveInt = z.coerce.number().int().positive();
const optionalMs = z.coerce.number().int().nonnegative().optional();
const flag = z.enum(['0', '1']).default('0');
/** An empty value means unset, as a shell's `VAR=` usually intends. */
const optionalText = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value));

/** VENUS_TRACING's values (protocol/src/node/tracing.ts takes the same names). */
export const TRACING_EXPORTER_NAMES = ['off', 'none', 'otlp', 'console'] as const;

const duration = z
  .string()
  .regex(/^\d+(?:\.\d+)?\s*(ms|s|m|h)?$/, 'a duration such as 15m, 900s, 250ms or 900000')
  .optional();

/** Every setting of every process. Add a new one here, then pick it where it is read. */
export const SETTINGS = {
  // Logging (read by the logger itself too; validated here so a typo fails start).
  VENUS_LOG_LEVEL: z.enum(LOG_LEVELS).optional(),
  VENUS_LOG_PII: flag,

  // Listening.
  VENUS_PORT: port(8080),
  VENUS_HOST: z.string().min(1).default('127.0.0.1'),
  VENUS_TLS_KEY_FILE: optionalText,
  VENUS_TLS_CERT_FILE: optionalText,
  // `npm start` without a key and certificate of its own: https and wss on VENUS_TLS_PORT as well,
  // with a self-signed certificate kept in VENUS_TLS_DIR (default: a folder in the system temp dir)
  // and reused while it is valid. VENUS_TLS_SELF_SIGNED=0 serves plain http and ws only.
  VENUS_TLS_PORT: port(8443),
  VENUS_TLS_DIR: optionalText,
  VENUS_TLS_SELF_SIGNED: z.enum(['0', '1']).default('1'),

  // Redis: timeline streams, BullMQ, fleet registry, keys and quotas. Unset: all in memory.
  VENUS_REDIS_URL: optionalText.pipe(
    z
      .string()
      .regex(/^(rediss?:\/\/|unix:|\/)/, 'a redis://, rediss:// or unix socket url')
      .optional(),
  ),
  VENUS_REDIS_PREFIX: z.string().default('venus:'),
  VENUS_FLEET_PREFIX: optionalText,
  // A GPU worker's registration expires this long after its last heartbeat (beats every third of
  // it); an edge moves the sessions of a worker whose registration stayed gone (docs/fleet.md).
  VENUS_FLEET_TTL_MS: z.coerce.number().int().min(300).max(600_000).default(15_000),

  // Auth and tenancy (parsed further by the edge's auth and tenancy modules).
  VENUS_API_KEYS: optionalText,
  VENUS_ADMIN_KEY: optionalText,
  VENUS_AUTH_SECRET: optionalText,
  VENUS_TENANT_LIMITS: optionalText,
  // The Twilio account's auth token: the TwiML webhook then requires a valid X-Twilio-Signature.
  VENUS_TWILIO_AUTH_TOKEN: optionalText,
  VENUS_RELAY_TOKEN: optionalText,
  // Each realtime session's input audio budget (edge/src/tenancy/input-audio-budget.ts): ms of
  // audio per ms of wall time (1 = real time) and the burst on top; audio past it is dropped with
  // a `rate_limited` error. Defaults 1 and 10000 (one largest append).
  VENUS_INPUT_AUDIO_RATE: z.coerce.number().positive().optional(),
  VENUS_INPUT_AUDIO_BURST_MS: positiveInt.optional(),

  // Edge placement. VENUS_MODEL_VARIANT: place only on registry workers of this model (`name` or
  // `name@revision`, as each worker registers its model port's capabilities); unset: any.
  VENUS_WORKERS: optionalText,
  VENUS_MODEL_VARIANT: optionalText,

  // GPU worker.
  VENUS_RELAY_PORT: port(8081),
  VENUS_WORKER_ID: optionalText,
  VENUS_RELAY_PUBLIC_URL: optionalText.pipe(
    z
      .string()
      .regex(/^wss?:\/\//, 'a ws(s):// url')
      .optional(),
  ),
  VENUS_MAX_SESSIONS: positiveInt.optional(),
  VENUS_INFERENCE_THREADS: positiveInt.default(1),
  VENUS_TTS_THREADS: positiveInt.default(1),
  VENUS_DRAIN_TIMEOUT_MS: z.coerce.number().int().nonnegative().default(30_000),
  // The model (VENUS_MODEL and its VENUS_SERVICE_*, VENUS_BUNDLE_DIR, VENUS_CASCADE_* settings) is
  // validated by embedded/model-from-env.ts and the cascade's config, which own those names.

  // SIP bridge (`npm run sip`, sip-bridge/): SIP over UDP and TCP on one port, routes from a JSON
  // file (docs/telephony-sip.md), RTP on the media address, sessions on the worker of VENUS_WORKERS.
  VENUS_SIP_HOST: z.string().min(1).default('127.0.0.1'),
  VENUS_SIP_PORT: port(5060),
  VENUS_SIP_CONFIG: optionalText,
  VENUS_SIP_MEDIA_ADDRESS: optionalText,
  VENUS_SIP_MAX_CALLS: positiveInt.default(500),
  // The bridge's control API (outbound calls, REFER transfer): off unless a port is set; the token
  // is required with it. The harness's call_number / transfer_call reach it at VENUS_SIP_CONTROL_URL.
  VENUS_SIP_CONTROL_HOST: z.string().min(1).default('127.0.0.1'),
  VENUS_SIP_CONTROL_PORT: z.coerce.number().int().min(0).max(65_535).optional(),
  VENUS_SIP_CONTROL_TOKEN: optionalText,
  VENUS_SIP_CONTROL_URL: optionalText,

  // Harness.
  VENUS_HARNESS_PREFIX: optionalText,
  VENUS_HARNESS_CONCURRENCY: positiveInt.default(16),
  VENUS_HARNESS_LOCK_DURATION_MS: optionalMs,
  VENUS_HARNESS_STALLED_INTERVAL_MS: optionalMs,
  VENUS_HARNESS_MAX_STALLED_COUNT: z.coerce.number().int().nonnegative().optional(),
  VENUS_HARNESS_PROGRESS_FIRST_MS: optionalMs,
  VENUS_HARNESS_PROGRESS_EVERY_MS: optionalMs,
  VENUS_HARNESS_DRAIN_MS: optionalMs,
  VENUS_HARNESS_BUILTIN_LATENCY_MS: optionalMs,
  VENUS_HARNESS_FUNCTIONS_MODULE: optionalText,

  // Functions platform and planner.
  VENUS_FUNCTIONS_ALLOW_PRIVATE: flag,
  VENUS_SECRETS_KEY: optionalText,
  VENUS_PLANNER_BASE_URL: optionalText,
  VENUS_PLANNER_MODEL: optionalText,
  VENUS_PLANNER_API_KEY: optionalText,

  // Observability (docs/observability.md): the harness's `/metrics` listener (the edge serves it on
  // VENUS_PORT, a GPU worker on VENUS_RELAY_PORT). Default 0, a free port named in its ready line,
  // so several harness processes share a machine; deployments set 9464. Traces: `otlp` (OTLP/HTTP,
  // endpoint from OTEL_EXPORTER_OTLP_ENDPOINT), `console`, or `off` (default); OTEL_TRACES_EXPORTER
  // is read when it is unset.
  VENUS_METRICS_PORT: port(0),
  VENUS_TRACING: z.enum(TRACING_EXPORTER_NAMES).default('off'),

  // Timeline and media retention (README "Retention"): durations as `15m`, `900s`, `250ms` or bare
  // milliseconds; parsed to ms by embedded/session-storage.ts, which owns the defaults.
  VENUS_TIMELINE_RETENTION: optionalText.pipe(duration),
  VENUS_TIMELINE_MAX_EVENTS: positiveInt.optional(),
  VENUS_MEDIA_WINDOW_MS: positiveInt.optional(),
  VENUS_MEDIA_RETENTION: optionalText.pipe(duration),
} as const;

export type SettingName = keyof typeof SETTINGS;

/** Older names still read when the `VENUS_` name is unset (documented in the README). */
export const SETTING_ALIASES: Partial<Record<SettingName, string>> = {
  VENUS_REDIS_URL: 'REDIS_URL',
  VENUS_PORT: 'PORT',
  VENUS_HOST: 'HOST',
  VENUS_RELAY_PORT: 'RELAY_PORT',
  VENUS_WORKER_ID: 'WORKER_ID',
  VENUS_RELAY_PUBLIC_URL: 'RELAY_PUBLIC_URL',
  VENUS_MAX_SESSIONS: 'MAX_SESSIONS',
  VENUS_INFERENCE_THREADS: 'INFERENCE_THREADS',
  VENUS_TTS_THREADS: 'TTS_THREADS',
  VENUS_DRAIN_TIMEOUT_MS: 'DRAIN_TIMEOUT_MS',
  VENUS_HARNESS_PREFIX: 'HARNESS_PREFIX',
  VENUS_HARNESS_CONCURRENCY: 'HARNESS_CONCURRENCY',
  VENUS_HARNESS_LOCK_DURATION_MS: 'HARNESS_LOCK_DURATION_MS',
  VENUS_HARNESS_STALLED_INTERVAL_MS: 'HARNESS_STALLED_INTERVAL_MS',
  VENUS_HARNESS_MAX_STALLED_COUNT: 'HARNESS_MAX_STALLED_COUNT',
  VENUS_HARNESS_PROGRESS_FIRST_MS: 'HARNESS_PROGRESS_FIRST_MS',
  VENUS_HARNESS_PROGRESS_EVERY_MS: 'HARNESS_PROGRESS_EVERY_MS',
  VENUS_HARNESS_DRAIN_MS: 'HARNESS_DRAIN_MS',
  VENUS_HARNESS_BUILTIN_LATENCY_MS: 'HARNESS_BUILTIN_LATENCY_MS',
  VENUS_HARNESS_FUNCTIONS_MODULE: 'HARNESS_FUNCTIONS_MODULE',
  VENUS_TRACING: 'OTEL_TRACES_EXPORTER',
};

/** The schema of one process's settings: the named entries of the catalogue. */
/**
 * Settings that several processes share, picked together: what a process needs is read from the
 * same names everywhere.
 */
export const SETTING_GROUPS = {
  logging: ['VENUS_LOG_LEVEL', 'VENUS_LOG_PII'],
  storage: ['VENUS_TIMELINE_RETENTION', 'VENUS_TIMELINE_MAX_EVENTS', 'VENUS_MEDIA_WINDOW_MS', 'VENUS_MEDIA_RETENTION'],
  tls: ['VENUS_TLS_KEY_FILE', 'VENUS_TLS_CERT_FILE'],
  redis: ['VENUS_REDIS_URL', 'VENUS_REDIS_PREFIX'],
  auth: ['VENUS_API_KEYS', 'VENUS_ADMIN_KEY', 'VENUS_AUTH_SECRET', 'VENUS_TENANT_LIMITS', 'VENUS_TWILIO_AUTH_TOKEN'],
  inputBudget: ['VENUS_INPUT_AUDIO_RATE', 'VENUS_INPUT_AUDIO_BURST_MS'],
  functions: [
    'VENUS_FUNCTIONS_ALLOW_PRIVATE',
    'VENUS_SECRETS_KEY',
    'VENUS_PLANNER_BASE_URL',
    'VENUS_PLANNER_MODEL',
    'VENUS_PLANNER_API_KEY',
  ],
} as const satisfies Record<string, readonly SettingName[]>;

export function pickSettings<const N extends SettingName>(names: readonly N[]) {
  const shape = Object.fromEntries(names.map((name) => [name, SETTINGS[name]])) as { [K in N]: (typeof SETTINGS)[K] };
  return z.object(shape);
}

type Env = Record<string, string | undefined>;

/**
 * The environment with every alias resolved to its `VENUS_` name, and the legacy name filled in
 * too, for modules that still take an env record (the edge's auth, tenancy and placement).
 */
export function resolveSettingAliases(processName: string, env: Env): Env {
  const resolved: Env = { ...env };
  for (const [name, alias] of Object.entries(SETTING_ALIASES) as [SettingName, string][]) {
    const own = env[name];
    const old = env[alias];
    if (own !== undefined && old !== undefined && own !== old) {
      throw new VenusError(
        'invalid_settings',
        `${processName}: ${name} and its older name ${alias} are both set, to different values`,
      );
    }
    const value = own ?? old;
    if (value === undefined) continue;
    resolved[name] = value;
    resolved[alias] = value;
  }
  return resolved;
}

const SECRET_NAME = /KEY|SECRET|TOKEN|PASSWORD/;

/**
 * Reads and validates one process's settings; throws `invalid_settings` naming every bad variable
 * (its value too, unless the name says it is a secret). Returns the typed settings and the resolved
 * environment for the sub-parsers that take one.
 */
export function readSettings<S extends z.ZodObject>(
  processName: string,
  schema: S,
  env: Env,
): { settings: z.infer<S>; env: Env } {
  const resolved = resolveSettingAliases(processName, env);
  const parsed = schema.safeParse(resolved);
  if (parsed.success) return { settings: parsed.data, env: resolved };
  const problems = parsed.error.issues.map((issue) => {
    const name = String(issue.path[0] ?? '?');
    const alias = SETTING_ALIASES[name as SettingName];
    const shown =
      alias !== undefined && env[name] === undefined && env[alias] !== undefined
        ? `${name} (read from ${alias})`
        : name;
    const value = resolved[name];
    const got = value === undefined || SECRET_NAME.test(name) ? '' : ` (got ${JSON.stringify(value)})`;
    return `${shown}: ${issue.message}${got}`;
  });
  throw new VenusError('invalid_settings', `${processName}: bad settings: ${problems.join('; ')}`);
}
