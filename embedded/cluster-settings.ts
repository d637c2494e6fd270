import { VenusError } from '@venus/protocol';
import { z } from 'zod';

/**
 * `npm run cluster`'s own settings (read here only, validated with zod once):
 * - VENUS_CLUSTER_PORT (8080): the first edge's port; the layout below counts from it. `0`: every
 *   process on a free port (the banner names them), so several clusters or tests share a machine.
 * - VENUS_CLUSTER_EDGES (2), VENUS_CLUSTER_WORKERS (3), VENUS_CLUSTER_HARNESSES (2): how many of each.
 * - VENUS_CLUSTER_DATA_DIR: Redis's directory (its AOF); default a fresh temp dir, removed at stop.
 * - VENUS_CLUSTER_DRAIN_MS (5000): each GPU worker's VENUS_DRAIN_TIMEOUT_MS when the cluster stops.
 * Every other VENUS_* setting (VENUS_MODEL, VENUS_API_KEYS, VENUS_LOG_LEVEL, ...) passes to the
 * processes that read it.
 */
const count = (fallback: number, max: number) => z.coerce.number().int().min(1).max(max).default(fallback);

export const ClusterSettingsSchema = z.object({
  VENUS_CLUSTER_PORT: z.coerce.number().int().min(0).max(65_000).default(8080),
  VENUS_CLUSTER_EDGES: count(2, 5),
  VENUS_CLUSTER_WORKERS: count(3, 8),
  VENUS_CLUSTER_HARNESSES: count(2, 8),
  VENUS_CLUSTER_DATA_DIR: z
    .string()
    .optional()
    .transform((value) => (value?.trim() ? value : undefined)),
  VENUS_CLUSTER_DRAIN_MS: z.coerce.number().int().nonnegative().default(5_000),
});

export type ClusterSettings = z.infer<typeof ClusterSettingsSchema>;

/** Where each process listens; 0 means a free port, which the process names in its ready line. */
export interface ClusterLayout {
  redisPort: number;
  edgePorts: number[];
  workerPorts: number[];
  harnessMetricsPorts: number[];
}

/**
 * Ports from the base: edges at base, base+2, ... (as docker-compose.yml publishes them; base+1 is
 * left to the usual relay port 8081); GPU worker relays from base+10; harness
 * `/metrics` from base+20; Redis at base+30. With base 0 everything is 0 (free) except Redis, whose
 * port the caller picks free (redis-server cannot name the port it chose).
 *
 * @example
 *   clusterLayout({ ...settings, VENUS_CLUSTER_PORT: 8080 }); // edges 8080 8082, workers 8090-8092, Redis 8110
 */
export function clusterLayout(settings: ClusterSettings, freeRedisPort = 0): ClusterLayout {
  const base = settings.VENUS_CLUSTER_PORT;
  const from = (offset: number, n: number, step = 1) =>
    Array.from({ length: n }, (_, i) => (base === 0 ? 0 : base + offset + i * step));
  return {
    redisPort: base === 0 ? freeRedisPort : base + 30,
    edgePorts: from(0, settings.VENUS_CLUSTER_EDGES, 2),
    workerPorts: from(10, settings.VENUS_CLUSTER_WORKERS),
    harnessMetricsPorts: from(20, settings.VENUS_CLUSTER_HARNESSES),
  };
}

export function readClusterSettings(env: Record<string, string | undefined>): ClusterSettings {
  const parsed = ClusterSettingsSchema.safeParse(env);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `${String(issue.path[0] ?? '?')}: ${issue.message}`);
  throw new VenusError('invalid_settings', `npm run cluster: bad settings: ${problems.join('; ')}`);
}
