import { VenusError } from '@venus/protocol';
import type { DurableObjectNamespace } from './cloudflare.ts';

/** Bindings and vars of the Workers edge (see wrangler.toml). */
export interface WorkersEdgeEnv {
  /** The RealtimeSession Durable Object class: one object per realtime session. */
  REALTIME_SESSION: DurableObjectNamespace;
  /** GPU worker relays, comma-separated ws(s)://host:port/relay (as on Node). */
  VENUS_WORKERS?: string;
  /** Shared secret the GPU workers require on the relay upgrade (a secret, not a var). */
  VENUS_RELAY_TOKEN?: string;
  /** Comma-separated API keys of tenant `default`; none means an open edge. */
  VENUS_API_KEYS?: string;
}

export function apiKeysOf(env: WorkersEdgeEnv): string[] {
  return (env.VENUS_API_KEYS ?? '')
    .split(',')
    .map((key) => key.trim())
    .filter(Boolean);
}

/**
 * The relay a session's Durable Object dials: a stable pick from VENUS_WORKERS by session id, so a
 * reconnecting object finds the same worker. (The Redis fleet registry is not reachable from
 * Workers; put a load balancer's url here to spread sessions by load.)
 */
export function workerUrlFor(env: WorkersEdgeEnv, sessionId: string): string {
  const urls = (env.VENUS_WORKERS ?? '').split(/[\s,]+/).filter(Boolean);
  if (urls.length === 0)
    throw new VenusError('model_unavailable', 'VENUS_WORKERS is not set: no GPU worker to relay to');
  let hash = 0;
  for (let i = 0; i < sessionId.length; i++) hash = (hash * 31 + sessionId.charCodeAt(i)) >>> 0;
  return urls[hash % urls.length]!;
}
