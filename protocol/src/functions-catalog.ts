import { z } from 'zod';
import { DeliveryPolicySchema } from './delegation.ts';

/**
 * Limits of the developer functions platform. Sizes are UTF-8 bytes; the edge answers 413 past them.
 */
export const FUNCTIONS_LIMITS = {
  maxSourceBytes: 256 * 1024,
  maxArgsBytes: 64 * 1024,
  maxOutputBytes: 256 * 1024,
  maxSecretBytes: 4 * 1024,
  maxSecretsPerTenant: 100,
  maxNameLength: 64,
  maxDescriptionChars: 1000,
  maxExamples: 20,
  maxProperties: 32,
  /** Versions kept per function; older ones are dropped on deploy. */
  maxVersions: 20,
  /** Invocation log entries kept per function. */
  maxLogEntries: 100,
  maxLogLinesPerInvocation: 200,
  maxLogLineChars: 1000,
} as const;

const utf8 = new TextEncoder();
export function utf8Length(text: string): number {
  return utf8.encode(text).length;
}

export const FunctionNameSchema = z
  .string()
  .max(FUNCTIONS_LIMITS.maxNameLength)
  .regex(
    /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/,
    'must be snake_case: a-z, 0-9 and single underscores, starting with a letter',
  );

/** Secret names look like environment variables: `WEATHER_API_KEY`. */
export const SecretNameSchema = z
  .string()
  .max(64)
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must look like an environment variable name');

/** Tenants are opaque ids chosen by the auth layer; this keeps them safe inside keys and paths. */
export const TenantIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9._-]+$/);

const description = z.string().max(500).optional();

/** The JSON Schema subset a deployed function's arguments may use; unknown keywords are rejected. */
const ScalarParameterSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('string'),
    description,
    enum: z.array(z.string()).min(1).max(100).optional(),
    minLength: z.number().int().nonnegative().optional(),
    maxLength: z.number().int().nonnegative().optional(),
    pattern: z.string().max(500).optional(),
    format: z.enum(['date-time', 'date', 'email', 'uri']).optional(),
    default: z.string().optional(),
  }),
  z.strictObject({
    type: z.enum(['number', 'integer']),
    description,
    enum: z.array(z.number()).min(1).max(100).optional(),
    minimum: z.number().optional(),
    maximum: z.number().optional(),
    default: z.number().optional(),
  }),
  z.strictObject({ type: z.literal('boolean'), description, default: z.boolean().optional() }),
]);

const ArrayParameterSchema = z.strictObject({
  type: z.literal('array'),
  description,
  items: ScalarParameterSchema,
  minItems: z.number().int().nonnegative().optional(),
  maxItems: z.number().int().nonnegative().max(1000).optional(),
});

/** A bare `{ enum: [...] }` of strings or numbers, as JSON Schema allows without `type`. */
const EnumParameterSchema = z.strictObject({
  enum: z
    .array(z.union([z.string(), z.number()]))
    .min(1)
    .max(100),
  description,
});

export const ParameterSchema = z.union([ScalarParameterSchema, ArrayParameterSchema, EnumParameterSchema]);
export type Parameter = z.infer<typeof ParameterSchema>;

export const ParametersSchema = z
  .strictObject({
    type: z.literal('object'),
    description,
    properties: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/), ParameterSchema)
      .refine((p) => Object.keys(p).length <= FUNCTIONS_LIMITS.maxProperties, 'too many properties')
      .default({}),
    required: z.array(z.string()).default([]),
    additionalProperties: z.boolean().default(false),
  })
  .superRefine((schema, ctx) => {
    for (const name of schema.required) {
      if (!(name in schema.properties))
        ctx.addIssue({ code: 'custom', message: `required "${name}" is not a property` });
    }
  });
export type FunctionParameters = z.infer<typeof ParametersSchema>;

const sourceText = z
  .string()
  .min(1)
  .refine(
    (s) => utf8Length(s) <= FUNCTIONS_LIMITS.maxSourceBytes,
    `larger than ${FUNCTIONS_LIMITS.maxSourceBytes} bytes`,
  );

export const ModuleLimitsSchema = z.strictObject({
  /** CPU spent inside the function (synchronous stretches, timed by `vm`). */
  cpuMs: z.number().int().min(10).max(30_000).default(1000),
  /** V8 heap of the function's worker thread; exceeding it kills only that worker. */
  memoryMb: z.number().int().min(16).max(1024).default(64),
  /** Wall clock for one invocation, awaits included; past it the worker is terminated. */
  wallMs: z.number().int().min(10).max(120_000).default(5000),
});
export type ModuleLimits = z.infer<typeof ModuleLimitsSchema>;

export const HostGrantSchema = z
  .string()
  .max(253)
  .regex(/^(?:\*\.)?[a-z0-9.-]+(?::\d{1,5})?$/i, 'a host name, optionally `*.` in front and `:port` behind');

export const ModuleKindSchema = z.strictObject({
  type: z.literal('module'),
  /** ES module text whose `default` export or `run` export is `async (args, ctx) => reply`. */
  source: sourceText,
  limits: ModuleLimitsSchema.default({ cpuMs: 1000, memoryMb: 64, wallMs: 5000 }),
  grants: z
    .strictObject({
      /** Secret names exposed as `ctx.env[NAME]`. */
      env: z.array(SecretNameSchema).max(FUNCTIONS_LIMITS.maxSecretsPerTenant).default([]),
      /** Hosts the injected `fetch` may reach; `fetch` is absent when empty. */
      fetch: z.array(HostGrantSchema).max(50).default([]),
    })
    .default({ env: [], fetch: [] }),
});

const httpUrl = z
  .url({ protocol: /^https?$/ })
  .max(2000)
  .refine((u) => !/^[a-z]+:\/\/[^/]*@/i.test(u), 'credentials do not belong in the URL');

const httpDelivery = {
  /** The tenant secret that signs each request (`x-venus-signature`). */
  secretName: SecretNameSchema.optional(),
  /** Per attempt. */
  timeoutMs: z.number().int().min(10).max(60_000).default(10_000),
  /** Extra attempts after a 5xx, 429 or network failure; 4xx answers are final. */
  retries: z.number().int().min(0).max(5).default(2),
};

export const HttpKindSchema = z.strictObject({ type: z.literal('http'), url: httpUrl, ...httpDelivery });

export const CloudflareWorkerKindSchema = z.strictObject({
  type: z.literal('cloudflare-worker'),
  /** Module worker source (`export default { fetch(request, env) {...} }`). */
  script: sourceText,
  /** The deployed Worker; without it the script runs locally in workerd (needs `miniflare`). */
  url: httpUrl.optional(),
  ...httpDelivery,
});

export const FunctionKindSchema = z.discriminatedUnion('type', [
  ModuleKindSchema,
  HttpKindSchema,
  CloudflareWorkerKindSchema,
]);
export type FunctionKind = z.infer<typeof FunctionKindSchema>;
export type FunctionKindType = FunctionKind['type'];

/** What a developer deploys. */
export const FunctionSpecSchema = z.strictObject({
  name: FunctionNameSchema,
  description: z.string().trim().min(1).max(FUNCTIONS_LIMITS.maxDescriptionChars),
  parameters: ParametersSchema.default({ type: 'object', properties: {}, required: [], additionalProperties: false }),
  delivery: DeliveryPolicySchema.optional(),
  /** Plain-language queries the function answers: what the router matches delegations against. */
  examples: z.array(z.string().trim().min(1).max(300)).max(FUNCTIONS_LIMITS.maxExamples).default([]),
  keywords: z.array(z.string().trim().min(1).max(60)).max(50).optional(),
  kind: FunctionKindSchema,
});
export type FunctionSpec = z.infer<typeof FunctionSpecSchema>;
export type FunctionSpecInput = z.input<typeof FunctionSpecSchema>;

/** One deployed version. */
export interface FunctionRecord {
  tenant: string;
  name: string;
  version: number;
  deployedAtMs: number;
  spec: FunctionSpec;
}

export interface FunctionSummary {
  name: string;
  description: string;
  kind: FunctionKindType;
  /** The version invocations use by default. */
  latestVersion: number;
  deployedAtMs: number;
}

export interface FunctionVersionInfo {
  version: number;
  deployedAtMs: number;
  description: string;
  kind: FunctionKindType;
}

/** Why an invocation failed, stable for clients and dashboards. */
export const INVOCATION_ERROR_CODES = [
  /** CPU budget spent (a synchronous loop, heavy work). */
  'cpu_limit',
  /** Wall-clock limit reached; the worker was terminated. */
  'wall_timeout',
  /** Heap limit reached (the worker died) or typed-array budget exceeded. */
  'memory_limit',
  /** The function used something it was not granted: process, require, import, a fetch host. */
  'capability_denied',
  /** The module does not compile, imports something, or exports no function. */
  'invalid_module',
  /** The function threw or rejected. */
  'function_error',
  /** The returned value is not JSON, too large, or not a valid reply. */
  'invalid_output',
  /** The function's promise could never settle (nothing left to wait for). */
  'no_result',
  /** A granted secret is no longer set for the tenant. */
  'secret_missing',
  /** An HTTP function answered with a non-2xx status (after retries for 5xx). */
  'http_error',
  /** An HTTP function did not answer in time on any attempt. */
  'http_timeout',
  /** An HTTP function could not be reached. */
  'network_error',
  /** An HTTP function's address is on a private, loopback or link-local network, which this platform does not call. */
  'egress_refused',
  /** The caller gave up (delegation cancelled or timed out). */
  'cancelled',
  /** This platform cannot run the kind (e.g. a local Worker without miniflare). */
  'unavailable',
] as const;
export type InvocationErrorCode = (typeof INVOCATION_ERROR_CODES)[number];

export interface InvocationError {
  code: InvocationErrorCode;
  message: string;
}

export interface InvocationResult {
  ok: boolean;
  version: number;
  /** The reply's `data` (or the whole returned value when it was not a `{speech, data}` reply). */
  data?: unknown;
  /** A short spoken-style sentence; empty when the function gave none. */
  speech: string;
  /** What the function logged (`ctx.log`, `console.*`) or, for HTTP functions, one line per attempt. */
  logs: string[];
  durationMs: number;
  error?: InvocationError;
}

/** What every function replies: both fields optional; a bare string is taken as `speech`. */
export const FunctionReplySchema = z.strictObject({
  speech: z.string().max(3000).optional(),
  data: z.unknown().optional(),
});

export interface InvocationLogEntry {
  invocationId: string;
  atMs: number;
  version: number;
  ok: boolean;
  durationMs: number;
  error?: InvocationError;
  logs: string[];
}

export interface InvokeOptions {
  /** Caps the wall clock of this invocation below the function's own limit. */
  timeoutMs?: number;
  /** A specific version; the latest by default. */
  version?: number;
  workId?: string;
  session?: string;
  signal?: AbortSignal;
}

/**
 * Developer functions, per tenant: deploy versions, invoke them, read their logs, and keep the
 * secrets they may be granted. A tenant never sees, invokes or learns the existence of another
 * tenant's functions. Deploy validates everything (spec, argument schema, module compiles in the
 * sandbox, secrets exist) before it stores anything.
 *
 * Caller mistakes throw VenusError: `invalid_arguments` (bad spec or arguments),
 * `function_not_found` (unknown name or version, or another tenant's), `unsupported_feature`.
 * Failures of the function itself come back as `{ ok: false, error }`.
 *
 * @example
 *   const { version } = await catalog.deploy('acme', {
 *     name: 'greet', description: 'Greets someone by name.',
 *     parameters: { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] },
 *     kind: { type: 'module', source: 'export default async ({ who }) => ({ speech: `Hello ${who}` })' },
 *   });
 *   const result = await catalog.invoke('acme', 'greet', { who: 'Ada' }, { timeoutMs: 2000 });
 *   result.speech; // "Hello Ada"
 */
export interface FunctionsCatalog {
  deploy(tenant: string, spec: FunctionSpecInput): Promise<FunctionRecord>;
  list(tenant: string): Promise<FunctionSummary[]>;
  /** The latest version, or the given one; null when there is none for this tenant. */
  get(tenant: string, name: string, version?: number): Promise<FunctionRecord | null>;
  /** Oldest first; empty when the function does not exist for this tenant. */
  listVersions(tenant: string, name: string): Promise<FunctionVersionInfo[]>;
  /** Removes every version and its logs; false when there was nothing to delete. */
  delete(tenant: string, name: string): Promise<boolean>;
  invoke(tenant: string, name: string, args: unknown, options?: InvokeOptions): Promise<InvocationResult>;
  /** Newest first. */
  logs(tenant: string, name: string, options?: { limit?: number }): Promise<InvocationLogEntry[]>;
  setSecret(tenant: string, name: string, value: string): Promise<void>;
  /** Names only: secret values never leave the platform except into the functions granted them. */
  listSecrets(tenant: string): Promise<string[]>;
  deleteSecret(tenant: string, name: string): Promise<boolean>;
  close(): Promise<void>;
}
