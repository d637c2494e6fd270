import { type ServeEdgeNodeOptions, serveEdgeNode } from '@venus/edge';
import { SessionHost } from '@venus/gpu-worker';
import {
  BullmqDelegationConsumer,
  BullmqDelegationProducer,
  CatalogDelegationRunner,
  catalogFunctions,
  createBuiltinFunctions,
  delegationQueueDepth,
  FunctionPlatform,
  FunctionRegistry,
  InProcessExecutor,
  MemoryFunctionStore,
  type Planner,
  RedisFunctionStore,
  type VenusFunction,
} from '@venus/harness-functions';
import type {
  DelegationExecutor,
  FunctionsCatalog,
  MediaStore,
  ModelPort,
  SessionConfigInput,
  TimelineStore,
} from '@venus/protocol';
import { workerInputAudioBudget } from '@venus/protocol';
import { DelegationTracing, VenusMetrics } from '@venus/protocol/node';
import { InProcessLink } from './in-process-link.ts';
import { modelFromEnv } from './model-from-env.ts';
import { observeHost } from './observability.ts';
import { createSessionMedia, createSessionTimeline, storageSettingsFromEnv } from './session-storage.ts';

export interface EmbeddedRuntimeOptions {
  port?: number;
  hostname?: string;
  /** Redis Streams timeline and BullMQ harness when set; in-memory and in-process otherwise. */
  redisUrl?: string;
  /** Key prefix for everything this runtime keeps in Redis (default `venus:`). */
  redisPrefix?: string;
  apiKeys?: string[];
  defaultConfig?: SessionConfigInput;
  /** Anything else the Node edge takes: auth, tenancy, tls, webrtc, buffer limits. */
  edge?: Omit<ServeEdgeNodeOptions, 'link' | 'port' | 'hostname' | 'apiKeys' | 'defaultConfig'>;
  /** Functions every tenant may call; the built-ins by default. */
  functions?: VenusFunction[];
  /**
   * Developers' functions (`/v1/functions`), routed to per tenant beside `functions`. By default a
   * FunctionPlatform on Redis (with `redisUrl`) or in memory; `false` turns the API off.
   */
  catalog?: FunctionsCatalog | false;
  /** Let the default catalog's HTTP functions call private and loopback addresses (off by default). */
  functionsAllowPrivateNetworks?: boolean;
  /** Encrypt the default catalog's secrets in Redis with this key (VENUS_SECRETS_KEY). */
  secretsKey?: string;
  /** Chooses the function for each delegation (default: the deterministic RouterPlanner). */
  planner?: Planner;
  /** Replace the reference model (e.g. with another ModelPort). */
  model?: ModelPort;
  /** Choose the model port from these variables (VENUS_MODEL, …; see model-from-env.ts) when `model` is not given. */
  modelEnv?: Record<string, string | undefined>;
  executor?: DelegationExecutor;
  store?: TimelineStore;
  /** The session host's media store (by default the same backend as the timeline: Redis or memory). */
  media?: MediaStore;
  /**
   * Retention settings (VENUS_TIMELINE_RETENTION, VENUS_TIMELINE_MAX_EVENTS, VENUS_MEDIA_WINDOW_MS,
   * VENUS_MEDIA_RETENTION; see session-storage.ts): `npm start` passes its validated environment.
   * The defaults when not given.
   */
  storageEnv?: Record<string, string | undefined>;
  /** The process's Prometheus series, served at the edge's `/metrics`; a fresh registry by default. */
  metrics?: VenusMetrics;
}

export interface EmbeddedRuntime {
  url: string;
  /** The second, TLS listener (`edge.secure`), when there is one. */
  secureUrl?: string;
  host: SessionHost;
  store: TimelineStore;
  media: MediaStore;
  executor: DelegationExecutor;
  model: ModelPort;
  /** Edge, worker and harness series of this runtime (also at `GET /metrics`). */
  metrics: VenusMetrics;
  close(): Promise<void>;
}

/**
 * The embedded default: edge + one GPU worker (session host on the reference model) + the in-process
 * harness, wired in one process. The three parts meet only through `@venus/protocol` contracts:
 * relay frames over an in-process link, the timeline store, and the delegation executor interface.
 *
 * @example
 *   const rt = await startEmbeddedRuntime({ port: 8080 });
 *   console.log(`ws ${rt.url.replace('http', 'ws')}/v1/realtime`);
 */
export async function startEmbeddedRuntime(options: EmbeddedRuntimeOptions = {}): Promise<EmbeddedRuntime> {
  const prefix = options.redisPrefix ?? 'venus:';
  const storage = {
    redisUrl: options.redisUrl,
    prefix,
    settings: storageSettingsFromEnv(options.storageEnv ?? {}),
  };
  const store = options.store ?? createSessionTimeline(storage);
  const media = options.media ?? createSessionMedia(storage);
  const model = options.model ?? (await modelFromEnv(options.modelEnv ?? {}));
  // The platform this runtime owns (closed with it); a catalog passed in belongs to the caller.
  const platform =
    options.catalog === undefined
      ? new FunctionPlatform({
          store: options.redisUrl
            ? new RedisFunctionStore({
                url: options.redisUrl,
                prefix: `${prefix}fn:`,
                ...(options.secretsKey ? { secretsKey: options.secretsKey } : {}),
              })
            : new MemoryFunctionStore(),
          http: { allowPrivateNetworks: options.functionsAllowPrivateNetworks === true },
        })
      : null;
  const catalog = options.catalog === undefined ? platform! : options.catalog;
  const functions = options.functions ?? createBuiltinFunctions();
  // Each delegation is routed among the built-ins plus its own tenant's deployed functions.
  const routing =
    catalog === false
      ? { registry: new FunctionRegistry(functions), ...(options.planner ? { planner: options.planner } : {}) }
      : {
          runner: new CatalogDelegationRunner({
            catalog,
            functions,
            defaultPolicy: 'when_idle',
            ...(options.planner ? { planner: options.planner } : {}),
          }),
        };
  // With Redis, delegations go through BullMQ: this process enqueues them and also runs one harness
  // consumer, so `npm start` stays one process while more `harness` processes can join the queue.
  const consumer =
    !options.executor && options.redisUrl
      ? new BullmqDelegationConsumer({
          url: options.redisUrl,
          prefix,
          timeline: store,
          ...routing,
          onRunEnded: (outcome) => metrics.harnessRuns.inc({ outcome }),
        })
      : null;
  const metrics = options.metrics ?? new VenusMetrics({ process: 'start' });
  const queueDepth = consumer && options.redisUrl ? delegationQueueDepth({ url: options.redisUrl, prefix }) : null;
  if (queueDepth) metrics.watchQueue(() => queueDepth.counts());
  const tracing = new DelegationTracing();
  const executor = tracing.wrap(
    options.executor ??
      (options.redisUrl
        ? new BullmqDelegationProducer({ url: options.redisUrl, prefix })
        : new InProcessExecutor({ ...routing, timeline: store })),
  );
  // The worker holds each session to its own input budget, a margin above the edge's.
  const inputAudio = workerInputAudioBudget(options.edge?.tenancy?.inputAudio);
  // What a tenant's deployed functions let its users say extends each session's recogniser grammar.
  const spokenPhrases =
    catalog === false
      ? undefined
      : async (tenant: string) =>
          (await catalogFunctions(catalog, tenant)).flatMap((f) => [...f.examples, ...(f.keywords ?? [])]);
  const host = new SessionHost({
    model,
    executor,
    store,
    media,
    inputAudio,
    ...(spokenPhrases ? { spokenPhrases } : {}),
  });
  const unobserve = observeHost(host, { metrics, worker: 'embedded', tracing });
  const link = new InProcessLink(host);
  const edge = await serveEdgeNode({
    link,
    port: options.port ?? 8080,
    hostname: options.hostname ?? '127.0.0.1',
    ...(options.apiKeys ? { apiKeys: options.apiKeys } : {}),
    ...(options.defaultConfig ? { defaultConfig: options.defaultConfig } : {}),
    ...(catalog === false ? {} : { functions: catalog }),
    metrics,
    ...options.edge,
  });
  return {
    url: edge.url,
    ...(edge.secureUrl === undefined ? {} : { secureUrl: edge.secureUrl }),
    host,
    store,
    media,
    executor,
    model,
    metrics,
    async close() {
      await edge.close();
      unobserve();
      await host.close();
      await link.close();
      await executor.close();
      await consumer?.close();
      await queueDepth?.close();
      await model.close();
      await platform?.close();
      await store.close();
      if (!options.media) await media.close();
    },
  };
}
