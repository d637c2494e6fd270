import { pcmToBase64 } from '@venus/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RealtimeClient } from '../embedded/demo/realtime-client.ts';
import { type EmbeddedRuntime, startEmbeddedRuntime } from '../embedded/embedded-runtime.ts';

/**
 * Bad input over the public WebSocket: each case gets an `error` event whose code names what was
 * wrong and which event caused it, and the session lives on — a request afterwards is answered.
 */
let runtime: EmbeddedRuntime;
let wsUrl: string;

beforeAll(async () => {
  runtime = await startEmbeddedRuntime({ port: 0 });
  wsUrl = `${runtime.url.replace('http', 'ws')}/v1/realtime`;
}, 60_000);
afterAll(async () => {
  await runtime.close();
});

interface ErrorEvent {
  type: 'error';
  error: { code: string; message: string; event_id: string | null };
}

async function expectErrorThenLivesOn(send: (c: RealtimeClient) => void, code: string, eventId?: string) {
  const c = await RealtimeClient.connect({ url: wsUrl });
  const from = c.events.length;
  send(c);
  const err = (await c.waitFor((e) => e.type === 'error', 10_000, from)) as unknown as ErrorEvent;
  expect(err.error.code).toBe(code);
  if (eventId) expect(err.error.event_id).toBe(eventId);
  // The session lives on: a request afterwards gets a reply.
  c.say('hello');
  await c.waitFor((e) => e.type === 'response.output_audio_transcript.delta', 20_000, from);
  await c.close();
  return err;
}

describe('bad input gets a coded error and the session lives on', () => {
  it('malformed JSON -> invalid_json', async () => {
    await expectErrorThenLivesOn((c) => c.sendRaw('{"type": "session.update", '), 'invalid_json');
  });

  it('unknown event type -> unknown_event_type naming the type', async () => {
    const err = await expectErrorThenLivesOn(
      (c) => c.send({ type: 'conversation.teleport', event_id: 'evt_1' }),
      'unknown_event_type',
      'evt_1',
    );
    expect(err.error.message).toContain('conversation.teleport');
  });

  it('a schema violation -> invalid_event naming the field', async () => {
    const err = await expectErrorThenLivesOn(
      (c) => c.send({ type: 'conversation.item.truncate', event_id: 'evt_2', item_id: 'x', audio_end_ms: -5 }),
      'invalid_event',
      'evt_2',
    );
    expect(err.error.message).toContain('audio_end_ms');
  });

  it('oversized audio -> audio_too_large', async () => {
    const big = new Int16Array(24_000 * 12); // 12 s in one append, over the 10 s limit
    await expectErrorThenLivesOn(
      (c) => c.send({ type: 'input_audio_buffer.append', event_id: 'evt_3', audio: pcmToBase64(big) }),
      'audio_too_large',
      'evt_3',
    );
  });

  it('wrongly sampled audio -> audio_wrong_format (declared rate and odd-length PCM)', async () => {
    await expectErrorThenLivesOn(
      (c) =>
        c.send({
          type: 'session.update',
          event_id: 'evt_4',
          session: { audio: { input: { format: { type: 'audio/pcm', rate: 16000 } } } },
        }),
      'audio_wrong_format',
      'evt_4',
    );
    await expectErrorThenLivesOn(
      (c) =>
        c.send({
          type: 'input_audio_buffer.append',
          event_id: 'evt_5',
          audio: Buffer.from([1, 2, 3]).toString('base64'),
        }),
      'audio_wrong_format',
      'evt_5',
    );
  });

  it('events for another session -> wrong_session', async () => {
    await expectErrorThenLivesOn(
      (c) => c.send({ type: 'input_audio_buffer.clear', event_id: 'evt_6', session_id: 'sess_someone_else' }),
      'wrong_session',
      'evt_6',
    );
    // Truncating or acknowledging an item that belongs to another session.
    await expectErrorThenLivesOn(
      (c) =>
        c.send({
          type: 'conversation.item.truncate',
          event_id: 'evt_7',
          item_id: 'utt_999',
          content_index: 0,
          audio_end_ms: 10,
        }),
      'wrong_session',
      'evt_7',
    );
  });
});
