import OpenAI from 'openai-live';
import { LiveWS } from 'openai-live/resources/live/ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedRuntime, startEmbeddedRuntime } from '../embedded/embedded-runtime.ts';
import { until } from './support/until.ts';

/**
 * GPT-Live (the `openai` package's `resources/live`, 7.x, unmodified `LiveWS`) against the embedded
 * runtime at /v1/live/sessions, the URL the SDK builds from its base URL: a session with client
 * delegation from `session.start` to `session.closed`. The request is the session's initial user
 * item; the model acknowledges it aloud and delegates it to the client (`session.delegation.created`,
 * `target: "client"`); the client's `response.item.create` is the result, which is spoken.
 */
interface LiveEvent {
  type: string;
  [key: string]: unknown;
}

let runtime: EmbeddedRuntime;

beforeAll(async () => {
  runtime = await startEmbeddedRuntime({ port: 0, defaultConfig: { chunkMs: 160 } });
}, 60_000);
afterAll(async () => {
  await runtime?.close();
});

function openLive() {
  const live = new LiveWS(new OpenAI({ apiKey: 'sk-unused-local', baseURL: `${runtime.url}/v1` }));
  const events: LiveEvent[] = [];
  const errors: { message: string; code?: unknown }[] = [];
  const closes: number[] = [];
  live.on('event', (event) => events.push(event as unknown as LiveEvent));
  live.on('error', (error) => errors.push({ message: error.message, code: error.error?.error.code }));
  live.on('close', (code) => closes.push(code));
  const find = (type: string) => events.find((e) => e.type === type);
  const spoken = () =>
    events
      .filter((e) => e.type === 'session.output_transcript.delta')
      .map((e) => String(e.delta))
      .join('');
  return { live, events, errors, closes, find, spoken };
}

describe('GPT-Live on /v1/live', () => {
  it('LiveWS runs a session with a client delegation end to end', async () => {
    const { live, events, errors, closes, find, spoken } = openLive();
    expect(live.url.toString()).toBe(`${runtime.url.replace('http', 'ws')}/v1/live/sessions`);
    live.send({
      type: 'session.start',
      event_id: 'start_1',
      session: {
        model: 'gpt-live-1',
        instructions: 'Answer briefly.',
        delegation: { type: 'client' },
        audio: { format: { type: 'audio/pcm', rate: 24000 } },
        input: [{ role: 'user', content: [{ type: 'input_text', text: 'Where is my order 4417?' }] }],
      },
    });
    await until('session.started', () => find('session.started') !== undefined);
    expect(find('session.started')).toMatchObject({
      client_event_id: 'start_1',
      session: { model: 'gpt-live-1', instructions: 'Answer briefly.', delegation: { type: 'client' } },
    });

    await until('the delegation', () => find('session.delegation.created') !== undefined, 45_000);
    const created = find('session.delegation.created')!;
    const delegation = created.delegation as { id: string; target: string; type: string };
    expect(delegation).toMatchObject({ target: 'client', type: 'delegation' });
    expect(created.venus).toMatchObject({ query: 'Where is my order 4417?' });
    // The client answers once the model has spoken on while the delegation was pending: a server
    // that waited for the client would never let this happen.
    const before = events.indexOf(created);
    await until('audio while the delegation is pending', () =>
      events.slice(before).some((e) => e.type === 'session.output_audio.delta'),
    );
    const answeredAt = events.length;
    live.send({
      type: 'response.item.create',
      item: { type: 'function_call_output', call_id: delegation.id, output: 'Order 4417 arrives on Friday.' },
    });
    await until('the result spoken', () => spoken().includes('arrives on Friday'), 45_000);
    // Where the spoken transcript first holds the result: after the client answered.
    let heard = '';
    const answered = events.findIndex((e) => {
      if (e.type === 'session.output_transcript.delta') heard += String(e.delta);
      return heard.includes('arrives on Friday');
    });
    expect(answered).toBeGreaterThanOrEqual(answeredAt);
    expect(find('session.usage.updated')?.usage).toMatchObject({ seconds: expect.any(Number) });

    // What GPT-Live offers and this server does not is refused with a code, not ignored.
    live.send({ type: 'session.input_audio.mute', event_id: 'mute_1' });
    await until('the refusal', () => errors.length > 0);
    expect(errors[0]?.code).toBe('unsupported_feature');
    expect(find('error')).toMatchObject({ client_event_id: 'mute_1' });

    live.send({ type: 'session.close' });
    await until('session.closed', () => find('session.closed') !== undefined && closes.length > 0);
    expect(find('session.closed')).toMatchObject({ reason: 'close_requested', usage: { seconds: expect.any(Number) } });
    expect(errors).toHaveLength(1);
  }, 120_000);
});
