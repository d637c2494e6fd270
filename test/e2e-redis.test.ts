import { randomUUID } from 'node:crypto';
import { createBuiltinFunctions } from '@venus/harness-functions';
import { describe, expect, it } from 'vitest';
import { RealtimeClient } from '../embedded/demo/realtime-client.ts';
import { startEmbeddedRuntime } from '../embedded/embedded-runtime.ts';
import { until } from './support/until.ts';

/**
 * The production path in one process: REDIS_URL switches the timeline to Redis Streams and the
 * harness to BullMQ (this process enqueues and also runs a consumer). A delegation still goes all
 * the way to DELIVERED, and the session's timeline is readable from Redis afterwards.
 */
describe('embedded runtime on Redis', () => {
  it('delegates through BullMQ and records the timeline in Redis Streams', async () => {
    const redisUrl = process.env.REDIS_URL;
    if (!redisUrl) throw new Error('REDIS_URL is set by the test setup');
    const runtime = await startEmbeddedRuntime({
      port: 0,
      redisUrl,
      redisPrefix: `e2e:${randomUUID()}:`,
      functions: createBuiltinFunctions({ latencyMs: 300 }),
    });
    try {
      const client = await RealtimeClient.connect({
        url: `${runtime.url.replace('http', 'ws')}/v1/realtime`,
        acknowledgePlayback: true,
      });
      client.send({ type: 'session.update', session: { venus: { chunk_ms: 160, playback_acks: true } } });
      client.say('What time is it in Tokyo?');
      const delivered = await client.waitForTimeline(
        (e) => e.type === 'work.state' && e.data.state === 'DELIVERED',
        45_000,
      );
      await client.close();
      // Appends reach Redis in order but after the event went out to the client: read once they have.
      let stored = await runtime.store.read(client.sessionId);
      await until(
        'the DELIVERED event is in Redis',
        () => stored.some((e) => e.seq === delivered.seq),
        10_000,
        async () => {
          stored = await runtime.store.read(client.sessionId);
        },
      );
      expect(stored.map((e) => e.seq)).toEqual(stored.map((_, i) => i + 1));
      expect(stored.some((e) => e.type === 'work.result')).toBe(true);
      expect(stored.some((e) => e.seq === delivered.seq && e.type === 'work.state')).toBe(true);
    } finally {
      await runtime.close();
    }
  }, 90_000);
});
