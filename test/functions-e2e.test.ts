import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RealtimeClient } from '../embedded/demo/realtime-client.ts';
import { type EmbeddedRuntime, startEmbeddedRuntime } from '../embedded/embedded-runtime.ts';

/**
 * A developer's function, end to end on the embedded runtime as `npm start` runs it: deployed over
 * `/v1/functions`, chosen by the router for a spoken-style request the model delegated, run in the
 * module sandbox, and its answer spoken back in the same session. The built-ins are left out so the
 * deployed function is the only one that can answer.
 */
let runtime: EmbeddedRuntime;

beforeAll(async () => {
  runtime = await startEmbeddedRuntime({ port: 0, functions: [] });
}, 60_000);
afterAll(async () => {
  await runtime?.close();
});

const spec = {
  name: 'harbour_weather',
  description: 'Weather and sea conditions in a harbour city.',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string', enum: ['Lisbon', 'Oslo', 'Porto'] } },
    required: ['city'],
  },
  examples: ["what's the weather in Lisbon", 'weather in Oslo'],
  kind: {
    type: 'module',
    source: "export default async ({ city }) => ({ speech: 'In ' + city + ' the sea is calm and it is 19 degrees.' })",
  },
};

describe('deployed functions in the embedded runtime', () => {
  it('deploys over /v1/functions, then a delegated request runs it and the answer is spoken', async () => {
    const deployed = await fetch(`${runtime.url}/v1/functions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(spec),
    });
    expect(deployed.status).toBe(201);
    const listed = (await (await fetch(`${runtime.url}/v1/functions`)).json()) as { functions: { name: string }[] };
    expect(listed.functions.map((f) => f.name)).toEqual(['harbour_weather']);

    const url = `${runtime.url.replace('http', 'ws')}/v1/realtime`;
    const c = await RealtimeClient.connect({ url, acknowledgePlayback: true });
    try {
      c.send({ type: 'session.update', session: { venus: { chunk_ms: 160, playback_acks: true } } });
      c.startMicrophone();
      c.say("What's the weather in Lisbon?");
      const result = await c.waitFor((e) => e.type === 'venus.work.result', 45_000);
      expect(result).toMatchObject({ ok: true, function_name: 'harbour_weather' });
      expect(String(result.text)).toMatch(/Lisbon the sea is calm/);
      await c.waitForTimeline((e) => e.type === 'work.state' && e.data.state === 'DELIVERED', 45_000);
      const transcript = c.events
        .filter((e) => e.type === 'response.output_audio_transcript.delta')
        .map((e) => String(e.delta))
        .join('');
      expect(transcript).toMatch(/sea is calm/);
    } finally {
      await c.close();
    }
  }, 90_000);
});
