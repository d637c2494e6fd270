import type { EdgeAuthOptions } from './edge-auth.ts';
import { RedisKeyStore } from './redis-key-store.ts';

/**
 * Auth settings from the environment (Node only: it may open a Redis connection):
 * `VENUS_AUTH_SECRET` (the deployment secret), `VENUS_ADMIN_KEY` (operator bootstrap key),
 * `VENUS_API_KEYS` (comma-separated keys of tenant `default`), `VENUS_TWILIO_AUTH_TOKEN` (Twilio's
 * webhook signatures are checked when set), and `REDIS_URL` with
 * `VENUS_REDIS_PREFIX` for a key store shared by every edge.
 *
 * @example
 *   const server = await serveEdgeNode({ link, port: 8080, auth: new EdgeAuth(edgeAuthOptionsFromEnv(process.env)) });
 */
export function edgeAuthOptionsFromEnv(env: Record<string, string | undefined>): EdgeAuthOptions {
  const apiKeys = (env.VENUS_API_KEYS ?? '')
    .split(',')
    .map((key) => key.trim())
    .filter(Boolean);
  const options: EdgeAuthOptions = {
    ...(env.VENUS_AUTH_SECRET ? { secret: env.VENUS_AUTH_SECRET } : {}),
    ...(env.VENUS_ADMIN_KEY ? { adminKey: env.VENUS_ADMIN_KEY } : {}),
    ...(apiKeys.length > 0 ? { apiKeys } : {}),
    ...(env.VENUS_TWILIO_AUTH_TOKEN ? { twilioAuthToken: env.VENUS_TWILIO_AUTH_TOKEN } : {}),
  };
  // Without a stable secret the hashes in a shared store could not be checked after a restart.
  if (env.REDIS_URL && env.VENUS_AUTH_SECRET) {
    options.store = new RedisKeyStore({ url: env.REDIS_URL, prefix: env.VENUS_REDIS_PREFIX ?? 'venus:' });
  }
  return options;
}
