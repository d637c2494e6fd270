import { EspeakTts } from '@venus/gpu-worker';
import { createBuiltinFunctions } from '@venus/harness-functions';
import { pcmToBase64 } from '@venus/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { type EmbeddedRuntime, startEmbeddedRuntime } from '../embedded/embedded-runtime.ts';
import { until } from './support/until.ts';

/**
 * Push to talk (`turn_detection: null`) against the embedded runtime: a request spoken in eSpeak
 * NG's en-us voice is appended with no pacing (the edge holds it), then committed. The commit is
 * one user turn: `input_audio_buffer.committed` naming the user item, the item, the transcript the
 * reference model's recogniser heard for that item, and the model's answer; no
 * `speech_started`/`speech_stopped` of the server's own.
 */
let runtime: EmbeddedRuntime;
let tts: EspeakTts;

beforeAll(async () => {
  runtime = await startEmbeddedRuntime({
    port: 0,
    defaultConfig: { chunkMs: 160 },
    functions: createBuiltinFunctions({ latencyMs: 200 }),
  });
  tts = await EspeakTts.create();
}, 60_000);
afterAll(async () => {
  tts?.close();
  await runtime?.close();
});

interface ServerEvent {
  type: string;
  [key: string]: unknown;
}

describe('turn_detection null: push to talk', () => {
  it('a committed spoken request becomes one user item with its transcript, and is answered', async () => {
    const socket = new WebSocket(`${runtime.url.replace('http', 'ws')}/v1/realtime`);
    const events: ServerEvent[] = [];
    socket.on('message', (data) => events.push(JSON.parse(String(data)) as ServerEvent));
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    try {
      const send = (event: object) => socket.send(JSON.stringify(event));
      send({ type: 'session.update', session: { type: 'realtime', audio: { input: { turn_detection: null } } } });
      await until('session.updated', () => events.some((e) => e.type === 'session.updated'));
      const updated = events.find((e) => e.type === 'session.updated')!.session as { audio: { input: unknown } };
      expect(updated.audio.input).toMatchObject({ turn_detection: null });

      const speech = await tts.synthesize('What time is it in Tokyo', 'en-us');
      for (let at = 0; at < speech.length; at += 2400) {
        send({ type: 'input_audio_buffer.append', audio: pcmToBase64(speech.slice(at, at + 2400)) });
      }
      send({ type: 'input_audio_buffer.commit', event_id: 'evt_commit' });

      await until('committed', () => events.some((e) => e.type === 'input_audio_buffer.committed'));
      const committed = events.find((e) => e.type === 'input_audio_buffer.committed')!;
      const itemId = committed.item_id as string;
      const added = events.find((e) => e.type === 'conversation.item.added')!;
      expect(added.item).toMatchObject({ id: itemId, role: 'user', content: [{ type: 'input_audio' }] });
      expect(committed.previous_item_id).toBeNull();

      await until(
        'the transcript of the committed item',
        () => events.some((e) => e.type === 'conversation.item.input_audio_transcription.completed'),
        60_000,
      );
      const transcript = events.find((e) => e.type === 'conversation.item.input_audio_transcription.completed')!;
      expect(transcript.item_id).toBe(itemId);
      expect(transcript.transcript).toMatch(/tokyo/i);
      await until('an answer', () => events.some((e) => e.type === 'response.done'), 60_000);

      const types = events.map((e) => e.type);
      expect(types).not.toContain('input_audio_buffer.speech_started');
      expect(types).not.toContain('input_audio_buffer.speech_stopped');
      expect(types.filter((t) => t === 'input_audio_buffer.committed')).toHaveLength(1);
      expect(events.filter((e) => e.type === 'error')).toEqual([]);
    } finally {
      socket.close();
    }
  }, 120_000);
});
