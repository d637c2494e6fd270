import { createHash, randomUUID } from 'node:crypto';
import {
  FUNCTIONS_LIMITS,
  FunctionNameSchema,
  type FunctionRecord,
  type FunctionSpec,
  type FunctionSpecInput,
  FunctionSpecSchema,
  type FunctionSummary,
  type FunctionsCatalog,
  type FunctionVersionInfo,
  type InvocationError,
  type InvocationLogEntry,
  type InvocationResult,
  type InvokeOptions,
  SecretNameSchema,
  TenantIdSchema,
  utf8Length,
  VenusError,
} from '@venus/protocol';
import { z } from 'zod';
import { type FunctionReply, parseReply } from './function-reply.ts';
import { egressFetch } from './http/egress-guard.ts';
import { HttpFunctionInvoker, type HttpInvokerOptions } from './http/http-function-invoker.ts';
import type { LocalWorkerRuntime } from './local-worker-runtime.ts';
import { parametersValidator } from './parameters-validator.ts';
import { ModuleSandbox } from './sandbox/module-sandbox.ts';
import type { SandboxPoolOptions } from './sandbox/sandbox-pool.ts';
import { secretMask } from './secret-mask.ts';
import type { FunctionStore, StoredVersion } from './store/function-store.ts';

export interface FunctionPlatformOptions {
  store: FunctionStore;
  /**
   * A sandbox to share, or options for the one the platform owns. The owned sandbox's module
   * `fetch` goes through the same egress connector as HTTP functions (`http.allowPrivateNetworks`
   * decides for both); a shared sandbox brings its own (by default the private-address guard).
   */
  sandbox?: ModuleSandbox | SandboxPoolOptions;
  http?: HttpInvokerOptions;
  /** Local runs of `cloudflare-worker` functions (see loadMiniflareRuntime); without it they need a `url`. */
  workers?: LocalWorkerRuntime | null;
  now?: () => number;
}

type Outcome = { ok: true; reply: FunctionReply } | { ok: false; error: InvocationError };

/**
 * The functions platform behind the FunctionsCatalog contract: validates and stores versions,
 * runs `module` functions in the sandbox, calls `http` and `cloudflare-worker` functions, keeps
 * per-function invocation logs and per-tenant secrets. Memory or Redis underneath, by its store.
 *
 * @example
 *   const catalog = new FunctionPlatform({ store: new MemoryFunctionStore() });
 *   await catalog.deploy('acme', spec);
 *   const result = await catalog.invoke('acme', 'greet', { who: 'Ada' });
 *   await catalog.close();
 */
export class FunctionPlatform implements FunctionsCatalog {
  readonly #store: FunctionStore;
  readonly #sandbox: ModuleSandbox;
  readonly #ownsSandbox: boolean;
  readonly #httpOptions: HttpInvokerOptions;
  readonly #http: HttpFunctionInvoker;
  readonly #workers: LocalWorkerRuntime | null;
  readonly #now: () => number;
  readonly #validators = new Map<string, z.ZodType<Record<string, unknown>>>();

  constructor(options: FunctionPlatformOptions) {
    this.#store = options.store;
    this.#ownsSandbox = !(options.sandbox instanceof ModuleSandbox);
    const egress = egressFetch(options.http);
    this.#sandbox =
      options.sandbox instanceof ModuleSandbox
        ? options.sandbox
        : new ModuleSandbox({ fetch: egress, ...options.sandbox });
    this.#httpOptions = { fetch: egress, ...options.http };
    this.#http = new HttpFunctionInvoker(this.#httpOptions);
    this.#workers = options.workers ?? null;
    this.#now = options.now ?? Date.now;
  }

  async deploy(tenant: string, input: FunctionSpecInput): Promise<FunctionRecord> {
    checkTenant(tenant);
    const parsed = FunctionSpecSchema.safeParse(input);
    if (!parsed.success) {
      throw new VenusError('invalid_arguments', `invalid function spec: ${z.prettifyError(parsed.error)}`, {
        cause: parsed.error,
      });
    }
    const spec = parsed.data;
    parametersValidator(spec.parameters);
    await this.#checkKind(tenant, spec);
    const deployedAtMs = this.#now();
    const version = await this.#store.putVersion(tenant, spec, deployedAtMs, FUNCTIONS_LIMITS.maxVersions);
    return { tenant, name: spec.name, version, deployedAtMs, spec };
  }

  async list(tenant: string): Promise<FunctionSummary[]> {
    checkTenant(tenant);
    return (await this.#store.listLatest(tenant)).map((stored) => ({
      name: stored.name,
      description: stored.spec.description,
      kind: stored.spec.kind.type,
      latestVersion: stored.version,
      deployedAtMs: stored.deployedAtMs,
    }));
  }

  async get(tenant: string, name: string, version?: number): Promise<FunctionRecord | null> {
    checkTenant(tenant);
    if (!FunctionNameSchema.safeParse(name).success) return null;
    const stored = await this.#store.getVersion(tenant, name, version);
    return stored === null ? null : toRecord(tenant, stored);
  }

  async listVersions(tenant: string, name: string): Promise<FunctionVersionInfo[]> {
    checkTenant(tenant);
    if (!FunctionNameSchema.safeParse(name).success) return [];
    return (await this.#store.listVersions(tenant, name)).map((stored) => ({
      version: stored.version,
      deployedAtMs: stored.deployedAtMs,
      description: stored.spec.description,
      kind: stored.spec.kind.type,
    }));
  }

  async delete(tenant: string, name: string): Promise<boolean> {
    checkTenant(tenant);
    if (!FunctionNameSchema.safeParse(name).success) return false;
    return this.#store.deleteFunction(tenant, name);
  }

  async invoke(tenant: string, name: string, args: unknown, options: InvokeOptions = {}): Promise<InvocationResult> {
    checkTenant(tenant);
    const stored = FunctionNameSchema.safeParse(name).success
      ? await this.#store.getVersion(tenant, name, options.version)
      : null;
    if (stored === null) {
      const which = options.version === undefined ? '' : ` version ${options.version}`;
      throw new VenusError('function_not_found', `no function "${name}"${which}`);
    }
    const argsJson = JSON.stringify(args ?? {});
    if (utf8Length(argsJson) > FUNCTIONS_LIMITS.maxArgsBytes) {
      throw new VenusError('invalid_arguments', `arguments are larger than ${FUNCTIONS_LIMITS.maxArgsBytes} bytes`);
    }
    const validated = this.#validator(tenant, stored).safeParse(args ?? {});
    if (!validated.success) {
      throw new VenusError('invalid_arguments', `invalid arguments: ${z.prettifyError(validated.error)}`, {
        cause: validated.error,
      });
    }
    const started = performance.now();
    const logs: string[] = [];
    const outcome = await this.#run(tenant, stored, validated.data, options, logs);
    const durationMs = Math.round(performance.now() - started);
    const result: InvocationResult = {
      ok: outcome.ok,
      version: stored.version,
      speech: outcome.ok ? (outcome.reply.speech ?? '') : '',
      logs: clipLogs(logs),
      durationMs,
    };
    if (outcome.ok && outcome.reply.data !== undefined) result.data = outcome.reply.data;
    if (!outcome.ok) result.error = outcome.error;
    const entry: InvocationLogEntry = {
      invocationId: `inv_${randomUUID()}`,
      atMs: this.#now(),
      version: stored.version,
      ok: result.ok,
      durationMs,
      logs: result.logs,
    };
    if (result.error) entry.error = result.error;
    await this.#store.appendLog(tenant, name, entry, FUNCTIONS_LIMITS.maxLogEntries);
    return result;
  }

  async logs(tenant: string, name: string, options: { limit?: number } = {}): Promise<InvocationLogEntry[]> {
    checkTenant(tenant);
    if ((await this.get(tenant, name)) === null) throw new VenusError('function_not_found', `no function "${name}"`);
    const limit = Math.max(0, Math.min(options.limit ?? 20, FUNCTIONS_LIMITS.maxLogEntries));
    return this.#store.readLogs(tenant, name, limit);
  }

  async setSecret(tenant: string, name: string, value: string): Promise<void> {
    checkTenant(tenant);
    checkSecretName(name);
    if (typeof value !== 'string' || utf8Length(value) > FUNCTIONS_LIMITS.maxSecretBytes) {
      throw new VenusError(
        'invalid_arguments',
        `a secret is a string of at most ${FUNCTIONS_LIMITS.maxSecretBytes} bytes`,
      );
    }
    if (!(await this.#store.setSecret(tenant, name, value, FUNCTIONS_LIMITS.maxSecretsPerTenant))) {
      throw new VenusError('invalid_arguments', `a tenant has at most ${FUNCTIONS_LIMITS.maxSecretsPerTenant} secrets`);
    }
  }

  async listSecrets(tenant: string): Promise<string[]> {
    checkTenant(tenant);
    return this.#store.listSecrets(tenant);
  }

  async deleteSecret(tenant: string, name: string): Promise<boolean> {
    checkTenant(tenant);
    checkSecretName(name);
    return this.#store.deleteSecret(tenant, name);
  }

  async close(): Promise<void> {
    if (this.#ownsSandbox) await this.#sandbox.close();
    await this.#workers?.close();
    await this.#store.close();
  }

  /** Everything a version needs beyond its spec's shape, checked before it is stored. */
  async #checkKind(tenant: string, spec: FunctionSpec): Promise<void> {
    const kind = spec.kind;
    const secretNames = kind.type === 'module' ? kind.grants.env : kind.secretName ? [kind.secretName] : [];
    const set = await this.#store.getSecrets(tenant, secretNames);
    const missing = secretNames.filter((name) => !(name in set));
    if (missing.length > 0) {
      throw new VenusError('invalid_arguments', `set these secrets before deploying: ${missing.join(', ')}`);
    }
    if (kind.type === 'module') {
      const problem = await this.#sandbox.check(tenant, kind.source, kind.limits);
      if (problem !== null) {
        throw new VenusError('invalid_arguments', `the module does not load (${problem.code}): ${problem.message}`);
      }
    } else if (kind.type === 'cloudflare-worker') {
      const problem = await this.#sandbox.parse(tenant, kind.script);
      if (problem !== null)
        throw new VenusError('invalid_arguments', `the Worker script does not compile: ${problem.message}`);
      if (kind.url === undefined) {
        if (this.#workers === null) {
          throw new VenusError(
            'unsupported_feature',
            'running a Worker locally needs the miniflare package on this platform; give the `url` of the deployed Worker instead',
          );
        }
        const failure = await this.#workers.check(kind.script);
        if (failure !== null)
          throw new VenusError('invalid_arguments', `the Worker does not start in workerd: ${failure}`);
      }
    }
  }

  async #run(
    tenant: string,
    stored: StoredVersion,
    args: Record<string, unknown>,
    options: InvokeOptions,
    logs: string[],
  ): Promise<Outcome> {
    const kind = stored.spec.kind;
    const meta = {
      functionName: stored.name,
      version: stored.version,
      workId: options.workId ?? 'direct',
      session: options.session ?? 'direct',
    };
    const secretNames = kind.type === 'module' ? kind.grants.env : kind.secretName ? [kind.secretName] : [];
    const secrets = await this.#store.getSecrets(tenant, secretNames);
    const missing = secretNames.filter((name) => !(name in secrets));
    if (missing.length > 0) {
      return { ok: false, error: { code: 'secret_missing', message: `secrets no longer set: ${missing.join(', ')}` } };
    }
    // What the function logs, throws or answers never carries a granted secret out (secret-mask.ts).
    const mask = secretMask(secrets);

    if (kind.type === 'module') {
      const outcome = await this.#sandbox.run({
        tenant,
        source: kind.source,
        args: JSON.stringify(args),
        env: secrets,
        fetchHosts: kind.grants.fetch,
        limits: { ...kind.limits, wallMs: Math.min(kind.limits.wallMs, options.timeoutMs ?? Number.POSITIVE_INFINITY) },
        meta,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
      logs.push(...outcome.logs.map(mask.text));
      if (!outcome.ok) return { ok: false, error: { ...outcome.error, message: mask.text(outcome.error.message) } };
      if (utf8Length(outcome.value) > FUNCTIONS_LIMITS.maxOutputBytes) {
        return {
          ok: false,
          error: {
            code: 'invalid_output',
            message: `the reply is larger than ${FUNCTIONS_LIMITS.maxOutputBytes} bytes`,
          },
        };
      }
      // The sandbox thread has already refused anything not JSON, too deep or too large; a reply
      // that still does not parse is refused the same way rather than thrown as internal_error.
      let value: unknown;
      try {
        value = JSON.parse(mask.json(outcome.value));
      } catch {
        return { ok: false, error: { code: 'invalid_output', message: 'the reply is not JSON' } };
      }
      return parseReply(value, { strict: false });
    }

    let url = kind.url;
    let invoker = this.#http;
    if (url === undefined) {
      if (kind.type !== 'cloudflare-worker' || this.#workers === null) {
        return { ok: false, error: { code: 'unavailable', message: 'no Worker runtime on this platform' } };
      }
      const bindingsKey = createHash('sha256').update(JSON.stringify(secrets)).digest('hex').slice(0, 16);
      const key = `${tenant}/${stored.name}@${stored.version}#${bindingsKey}`;
      try {
        const fetch = await this.#workers.fetchFor(key, kind.script, secrets);
        invoker = new HttpFunctionInvoker({ ...this.#httpOptions, fetch });
      } catch (error) {
        return { ok: false, error: { code: 'unavailable', message: `the Worker did not start: ${String(error)}` } };
      }
      url = 'http://worker.local/';
    }
    const deadline = options.timeoutMs === undefined ? undefined : AbortSignal.timeout(options.timeoutMs);
    const signals = [options.signal, deadline].filter((s): s is AbortSignal => s !== undefined);
    const outcome = await invoker.invoke({
      url,
      ...(kind.secretName === undefined ? {} : { secret: secrets[kind.secretName]! }),
      timeoutMs: Math.min(kind.timeoutMs, options.timeoutMs ?? Number.POSITIVE_INFINITY),
      retries: kind.retries,
      invocationId: randomUUID(),
      payload: { args, workId: meta.workId, session: meta.session, function: stored.name, version: stored.version },
      ...(signals.length === 0 ? {} : { signal: AbortSignal.any(signals) }),
    });
    logs.push(...outcome.logs.map(mask.text));
    if (!outcome.ok && outcome.error.code === 'cancelled' && deadline?.aborted && !options.signal?.aborted) {
      return {
        ok: false,
        error: { code: 'http_timeout', message: `no answer within ${options.timeoutMs} ms overall` },
      };
    }
    if (!outcome.ok) return { ok: false, error: { ...outcome.error, message: mask.text(outcome.error.message) } };
    return { ok: true, reply: JSON.parse(mask.json(JSON.stringify(outcome.reply))) as FunctionReply };
  }

  #validator(tenant: string, stored: StoredVersion): z.ZodType<Record<string, unknown>> {
    const key = `${tenant}\n${stored.name}\n${stored.version}\n${stored.deployedAtMs}`;
    let validator = this.#validators.get(key);
    if (validator === undefined) {
      if (this.#validators.size >= 1000) this.#validators.clear();
      validator = parametersValidator(stored.spec.parameters);
      this.#validators.set(key, validator);
    }
    return validator;
  }
}

function toRecord(tenant: string, stored: StoredVersion): FunctionRecord {
  return { tenant, name: stored.name, version: stored.version, deployedAtMs: stored.deployedAtMs, spec: stored.spec };
}

function checkTenant(tenant: string): void {
  if (!TenantIdSchema.safeParse(tenant).success) {
    throw new VenusError('invalid_arguments', 'a tenant id is 1-64 characters of A-Z, a-z, 0-9, ".", "_" or "-"');
  }
}

function checkSecretName(name: string): void {
  if (!SecretNameSchema.safeParse(name).success) {
    throw new VenusError('invalid_arguments', `secret names look like environment variables, not "${name}"`);
  }
}

function clipLogs(lines: string[]): string[] {
  return lines
    .slice(0, FUNCTIONS_LIMITS.maxLogLinesPerInvocation)
    .map((line) =>
      line.length > FUNCTIONS_LIMITS.maxLogLineChars ? `${line.slice(0, FUNCTIONS_LIMITS.maxLogLineChars)}…` : line,
    );
}
