import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RealtimeClient } from '../embedded/demo/realtime-client.ts';
import { removeRedisKeys, testRedisUrl } from './support/redis.ts';
import { type RuntimeProcess, startRuntimeProcess } from './support/runtime-process.ts';

/**
 * API keys and function secrets never leave as themselves: a full run of `npm start` (a real child
 * process on Redis, logging at trace level) with a key in VENUS_API_KEYS and a deployed function
 * holding a secret (encrypted at rest with VENUS_SECRETS_KEY) that logs it, throws it, answers with
 * it and sends it in a refused fetch; then a spoken session whose delegation runs the function. All
 * output is captured: the process's stdout and stderr, every HTTP answer, every realtime event, the
 * function's stored logs and everything under the run's Redis prefix (timeline, jobs, the function
 * store). None may hold the key, the secret, the secrets key, or their base64/URL-encoded forms.
 */
const API_KEY = 'sk-venus-leakcheck-7Qx+9/zW=K2';
const SECRET = 'tok_Leak+Check/Secret=91&q';
const SECRETS_KEY = 'at-rest-key-for-the-leak-check-0123456789';
const prefix = `test:leak:${crypto.randomUUID()}:`;

let rt: RuntimeProcess;
/** Every HTTP answer and realtime event of the run, as text. */
const seen: string[] = [];

beforeAll(async () => {
  rt = await startRuntimeProcess({
    VENUS_API_KEYS: API_KEY,
    VENUS_SECRETS_KEY: SECRETS_KEY,
    VENUS_REDIS_URL: testRedisUrl(),
    VENUS_REDIS_PREFIX: prefix,
    VENUS_LOG_LEVEL: 'trace',
  });
}, 90_000);

afterAll(async () => {
  await rt?.stop();
  await removeRedisKeys(prefix);
});

async function call(method: string, path: string, body?: unknown, key = API_KEY) {
  const response = await fetch(`${rt.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  seen.push(`${method} ${path} ${response.status} ${JSON.stringify([...response.headers])} ${text}`);
  return { status: response.status, text };
}

/** The forms a value could leak in: as itself, base64, base64url, URL-encoded, JSON-escaped. */
function forms(value: string): string[] {
  return [
    value,
    Buffer.from(value).toString('base64'),
    Buffer.from(value).toString('base64url'),
    encodeURIComponent(value),
    JSON.stringify(value).slice(1, -1),
  ];
}

/** Every value under the run's prefix, whatever its Redis type, as text. */
async function dumpRedis(): Promise<string> {
  const redis = new Redis(testRedisUrl());
  try {
    const parts: string[] = [];
    for (const key of await redis.keys(`${prefix}*`)) {
      const type = await redis.type(key);
      if (type === 'string') parts.push(key, (await redis.getBuffer(key))?.toString('latin1') ?? '');
      if (type === 'hash') parts.push(key, JSON.stringify(await redis.hgetall(key)));
      if (type === 'list') parts.push(key, JSON.stringify(await redis.lrange(key, 0, -1)));
      if (type === 'set') parts.push(key, JSON.stringify(await redis.smembers(key)));
      if (type === 'zset') parts.push(key, JSON.stringify(await redis.zrange(key, '0', '-1')));
      if (type === 'stream') {
        const entries = await redis.xrangeBuffer(key, '-', '+');
        parts.push(key, entries.map(([, fields]) => fields.map((f) => f.toString('latin1')).join(' ')).join('\n'));
      }
    }
    return parts.join('\n');
  } finally {
    await redis.quit();
  }
}

const SOURCE = `export default async ({ city, mode }, ctx) => {
  const token = ctx.env.WEATHER_TOKEN;
  console.log('calling the weather service with', token, { authorization: token, token });
  ctx.log('token is ' + token);
  if (mode === 'throw') throw new Error('weather service refused token ' + token);
  if (mode === 'fetch') return (await fetch('http://127.0.0.1:9/' + token, { headers: { authorization: 'Bearer ' + token } })).status;
  if (mode === 'say') return { speech: 'the token is ' + token, data: { token } };
  return { speech: 'In ' + city + ' it is sunny and 21 degrees.' };
}`;

describe('secrets never leak', () => {
  it('a full run leaves no API key and no function secret in any output', async () => {
    expect((await call('PUT', '/v1/functions/secrets/WEATHER_TOKEN', { value: SECRET })).status).toBe(204);
    const deployed = await call('POST', '/v1/functions', {
      name: 'city_weather',
      description: 'Weather in a city.',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string', enum: ['Lisbon', 'Oslo'] }, mode: { type: 'string' } },
        required: ['city'],
      },
      examples: ["what's the weather in Lisbon", 'weather in Oslo'],
      kind: { type: 'module', source: SOURCE, grants: { env: ['WEATHER_TOKEN'], fetch: ['127.0.0.1:9'] } },
    });
    expect(deployed.status).toBe(201);
    for (const mode of ['throw', 'fetch', 'say', 'plain']) {
      const invoked = await call('POST', '/v1/functions/city_weather/invoke', { args: { city: 'Oslo', mode } });
      expect(invoked.status).toBe(200);
    }
    await call('GET', '/v1/functions/city_weather/logs?limit=50');
    await call('GET', '/v1/functions/secrets');
    await call('GET', '/v1/functions/city_weather');
    // Refused credentials near the real one.
    expect((await call('GET', '/v1/functions', undefined, `${API_KEY}x`)).status).toBe(401);
    expect((await call('GET', '/v1/functions', undefined, API_KEY.slice(0, -1))).status).toBe(401);

    const url = `${rt.url.replace('http', 'ws')}/v1/realtime`;
    const client = await RealtimeClient.connect({ url, apiKey: API_KEY, acknowledgePlayback: true });
    try {
      client.send({ type: 'session.update', session: { venus: { chunk_ms: 160, playback_acks: true } } });
      client.startMicrophone();
      client.say("What's the weather in Lisbon?");
      const result = await client.waitFor((e) => e.type === 'venus.work.result', 60_000);
      expect(result).toMatchObject({ ok: true, function_name: 'city_weather' });
      await client.waitForTimeline((e) => e.type === 'work.state' && e.data.state === 'DELIVERED', 60_000);
    } finally {
      await client.close();
      seen.push(...client.events.map((event) => JSON.stringify(event)));
    }
    // A session with a wrong key is refused, and says nothing of the right one.
    await expect(RealtimeClient.connect({ url, apiKey: `${API_KEY}x` })).rejects.toThrow();

    expect(await rt.stop()).toBe(0);
    const outputs: Record<string, string> = {
      stdout: rt.stdout(),
      stderr: rt.stderr(),
      'HTTP answers and realtime events': seen.join('\n'),
      redis: await dumpRedis(),
    };
    // The run did produce output to scan: the banner, the function's own logs, a timeline.
    expect(outputs.stdout).toContain('runtime ready');
    expect(outputs['HTTP answers and realtime events']).toContain('calling the weather service with');
    expect(outputs.redis).toContain('city_weather');
    const leaks: string[] = [];
    for (const [where, text] of Object.entries(outputs)) {
      for (const [what, value] of Object.entries({ 'API key': API_KEY, secret: SECRET, 'secrets key': SECRETS_KEY })) {
        for (const form of forms(value)) {
          const at = text.indexOf(form);
          if (at >= 0) leaks.push(`${what} in ${where}: …${text.slice(Math.max(0, at - 120), at + form.length + 40)}…`);
        }
      }
    }
    console.log(
      `secrets scan: ${Object.entries(outputs)
        .map(([where, text]) => `${where} ${text.length} chars`)
        .join(', ')}; ${leaks.length} leaks`,
    );
    expect(leaks).toEqual([]);
  }, 240_000);
});
