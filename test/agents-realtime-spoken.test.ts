import { OpenAIRealtimeWebSocket, RealtimeAgent, type RealtimeItem, RealtimeSession } from '@openai/agents-realtime';
import { EspeakTts } from '@venus/gpu-worker';
import { createBuiltinFunctions } from '@venus/harness-functions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedRuntime, startEmbeddedRuntime } from '../embedded/embedded-runtime.ts';
import { until } from './support/until.ts';

/**
 * `@openai/agents-realtime`, unmodified, with a microphone only: a request spoken in eSpeak NG's
 * en-us voice is sent as `input_audio_buffer.append` frames in real time, no transcript from the
 * client. The SDK's own history must get the committed user item and the transcript the reference
 * model's recogniser heard, in order before the assistant's answer.
 */
let runtime: EmbeddedRuntime;
let wsUrl: string;
let tts: EspeakTts;

beforeAll(async () => {
  runtime = await startEmbeddedRuntime({
    port: 0,
    defaultConfig: { chunkMs: 160 },
    functions: createBuiltinFunctions({ latencyMs: 200 }),
  });
  wsUrl = `${runtime.url.replace('http', 'ws')}/v1/realtime`;
  tts = await EspeakTts.create();
}, 60_000);
afterAll(async () => {
  tts?.close();
  await runtime?.close();
});

/** 24 kHz PCM16 in 100 ms frames, one every 100 ms, as a microphone delivers it. */
async function speakInto(session: RealtimeSession, pcm24k: Int16Array): Promise<void> {
  const frame = 2400;
  const started = performance.now();
  for (let i = 0; i * frame < pcm24k.length; i++) {
    const part = pcm24k.slice(i * frame, (i + 1) * frame);
    const padded = new Int16Array(frame);
    padded.set(part);
    session.sendAudio(padded.buffer);
    await new Promise((r) => setTimeout(r, Math.max(0, started + (i + 1) * 100 - performance.now())));
  }
}

const userAudio = (item: RealtimeItem) =>
  item.type === 'message' && item.role === 'user' ? item.content.find((p) => p.type === 'input_audio') : undefined;

describe('@openai/agents-realtime with a spoken request', () => {
  it("puts the committed user item and the model's transcript in the SDK's history", async () => {
    const agent = new RealtimeAgent({ name: 'venus', instructions: 'Answer briefly.' });
    const session = new RealtimeSession(agent, {
      transport: new OpenAIRealtimeWebSocket({ url: wsUrl }),
      model: 'venus-reference',
    });
    const errors: unknown[] = [];
    const types: string[] = [];
    session.on('error', (error) => errors.push(error));
    session.on('transport_event', (event) => types.push((event as { type: string }).type));
    await session.connect({ apiKey: 'sk-unused-local' });
    await until('the SDK session.update was applied', () => types.includes('session.updated'));

    const speech = await tts.synthesize('What time is it in Tokyo', 'en-us');
    const silence = new Int16Array(24_000);
    await speakInto(session, silence.subarray(0, 7200));
    await speakInto(session, speech);
    await speakInto(session, silence);

    await until(
      'the user item has its transcript in the SDK history',
      () => session.history.some((item) => /what time is it in tokyo/i.test(userAudio(item)?.transcript ?? '')),
      60_000,
    );
    const index = session.history.findIndex((item) => userAudio(item) !== undefined);
    expect(index).toBeGreaterThanOrEqual(0);
    // The assistant's answer comes after the user's item in the SDK's history.
    await until(
      "the assistant's answer is in the history",
      () => session.history.slice(index + 1).some((item) => item.type === 'message' && item.role === 'assistant'),
      60_000,
    );
    expect(types).toContain('input_audio_buffer.committed');
    expect(types).toContain('conversation.item.input_audio_transcription.completed');
    expect(errors).toEqual([]);
    session.close();
  }, 120_000);
});
