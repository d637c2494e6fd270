/**
 * Runs `cloudflare-worker` functions locally in workerd through Miniflare, when the optional
 * `miniflare` package is installed. Each deployed version gets its own Miniflare instance (a few
 * are kept, least recently used first out); requests reach it through `dispatchFetch`, so the HTTP
 * invoker's signing, retries and reply validation apply unchanged.
 */
import { createLogger, logUnlessTeardown } from '@venus/protocol';

const log = createLogger('harness.local-worker');

export interface LocalWorkerRuntime {
  /** Compiles the script in workerd; null when it starts, else why not. */
  check(script: string): Promise<string | null>;
  /** A fetch that reaches the given version's Worker; `bindings` become its `env`. */
  fetchFor(key: string, script: string, bindings: Record<string, string>): Promise<typeof fetch>;
  close(): Promise<void>;
}

interface MiniflareInstance {
  ready: Promise<unknown>;
  dispatchFetch(input: string, init?: RequestInit): Promise<Response>;
  dispose(): Promise<void>;
}
type MiniflareConstructor = new (options: Record<string, unknown>) => MiniflareInstance;

/** The package name is a variable so that type checking never requires the optional dependency. */
const MINIFLARE_PACKAGE = 'miniflare';
const COMPATIBILITY_DATE = '2025-01-01';

/** Miniflare when it can be imported, else null (the platform then needs a Worker `url`). */
export async function loadMiniflareRuntime(
  options: { maxInstances?: number } = {},
): Promise<LocalWorkerRuntime | null> {
  let Miniflare: MiniflareConstructor;
  try {
    const imported = (await import(MINIFLARE_PACKAGE)) as { Miniflare?: MiniflareConstructor };
    if (imported.Miniflare === undefined) return null;
    Miniflare = imported.Miniflare;
  } catch {
    return null;
  }
  const maxInstances = Math.max(1, options.maxInstances ?? 4);
  const instances = new Map<string, MiniflareInstance>();
  const start = async (script: string, bindings: Record<string, string>): Promise<MiniflareInstance> => {
    const instance = new Miniflare({ modules: true, script, compatibilityDate: COMPATIBILITY_DATE, bindings });
    try {
      await instance.ready;
      return instance;
    } catch (error) {
      // The start failure is what the caller needs; a failed cleanup after it is only logged.
      await instance
        .dispose()
        .catch((e: unknown) => logUnlessTeardown(log, e, 'disposing a Worker that did not start failed'));
      throw error;
    }
  };
  return {
    async check(script) {
      try {
        await (await start(script, {})).dispose();
        return null;
      } catch (error) {
        return error instanceof Error ? error.message : String(error);
      }
    },
    async fetchFor(key, script, bindings) {
      let instance = instances.get(key);
      if (instance === undefined) {
        instance = await start(script, bindings);
        instances.set(key, instance);
        while (instances.size > maxInstances) {
          const [oldestKey, oldest] = instances.entries().next().value as [string, MiniflareInstance];
          instances.delete(oldestKey);
          void oldest.dispose();
        }
      } else {
        instances.delete(key);
        instances.set(key, instance);
      }
      const target = instance;
      return ((input: string | URL | Request, init?: RequestInit) =>
        target.dispatchFetch(String(input instanceof Request ? input.url : input), init)) as typeof fetch;
    },
    async close() {
      await Promise.all(
        [...instances.values()].map((instance) =>
          instance.dispose().catch((e: unknown) => logUnlessTeardown(log, e, 'disposing a Worker failed')),
        ),
      );
      instances.clear();
    },
  };
}
