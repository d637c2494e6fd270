import { EspeakTts } from '@venus/gpu-worker';
import { createBuiltinFunctions } from '@venus/harness-functions';
import type { TimelineEvent } from '@venus/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RealtimeClient } from '../embedded/demo/realtime-client.ts';
import { type EmbeddedRuntime, startEmbeddedRuntime } from '../embedded/embedded-runtime.ts';

/**
 * The reference model hears words: a request spoken into the microphone (eSpeak NG's en-us voice,
 * audio only, no transcript from the client) over the real WebSocket to the embedded runtime. The
 * user's turn is committed as an item, its transcript comes from the model's own recogniser (on the
 * stored timeline as `user.transcript`, to the client as the OpenAI transcription events), and the
 * request is delegated to the right function and its answer spoken.
 */
let runtime: EmbeddedRuntime;
let tts: EspeakTts;
let wsUrl: string;

beforeAll(async () => {
  runtime = await startEmbeddedRuntime({ port: 0, functions: createBuiltinFunctions({ latencyMs: 200 }) });
  wsUrl = `${runtime.url.replace('http', 'ws')}/v1/realtime`;
  tts = await EspeakTts.create();
}, 60_000);
afterAll(async () => {
  tts.close();
  await runtime.close();
});

const ofType = <T extends TimelineEvent['type']>(events: readonly TimelineEvent[], type: T) =>
  events.filter((e): e is Extract<TimelineEvent, { type: T }> => e.type === type);

describe('a spoken request, audio only', () => {
  it('is committed as a user item, transcribed by the model, delegated to the weather function for Berlin and answered aloud', async () => {
    const c = await RealtimeClient.connect({ url: wsUrl });
    c.send({ type: 'session.update', session: { venus: { chunk_ms: 160 } } });
    c.startMicrophone();
    await c.silence(300);
    await c.speak(await tts.synthesize('What is the weather in Berlin', 'en-us'));
    await c.silence(1000);

    const completed = await c.waitFor(
      (e) => e.type === 'conversation.item.input_audio_transcription.completed',
      30_000,
    );
    expect(String(completed.transcript)).toMatch(/weather in berlin/i);
    const itemId = String(completed.item_id);
    const started = c.events.find((e) => e.type === 'input_audio_buffer.speech_started');
    const committed = c.events.find((e) => e.type === 'input_audio_buffer.committed');
    expect(started?.item_id).toBe(itemId);
    expect(committed).toMatchObject({ item_id: itemId, previous_item_id: null });
    const added = c.events.find(
      (e) => e.type === 'conversation.item.added' && (e.item as { id: string }).id === itemId,
    );
    expect(added?.item).toMatchObject({ type: 'message', role: 'user', content: [{ type: 'input_audio' }] });
    const delta = c.events.find((e) => e.type === 'conversation.item.input_audio_transcription.delta');
    expect(delta).toMatchObject({ item_id: itemId, delta: completed.transcript });
    // Order: committed, then the item, then its transcript.
    const at = (e: unknown) => c.events.indexOf(e as (typeof c.events)[number]);
    expect(at(committed)).toBeLessThan(at(added));
    expect(at(added)).toBeLessThan(at(completed));

    // The weather function ran for Berlin and its answer was spoken.
    const result = await c.waitFor(
      (e) => e.type === 'venus.work.result' && e.function_name === 'weather' && e.ok === true,
      45_000,
    );
    expect(String(result.text)).toMatch(/Berlin/);
    const resultIndex = at(result);
    const spoken = await c.waitFor(
      (e) => e.type === 'response.output_audio_transcript.done' && /Berlin/.test(String(e.transcript)),
      45_000,
      resultIndex,
    );
    const audio = c.events
      .slice(resultIndex)
      .some((e) => e.type === 'response.output_audio.delta' && e.item_id === spoken.item_id);
    expect(audio).toBe(true);

    // The stored timeline has the transcript, with the audio inputs that carried the utterance.
    const sessionId = c.sessionId;
    await c.close();
    const stored = await runtime.store.read(sessionId);
    const [transcript] = ofType(stored, 'user.transcript');
    expect(transcript?.data).toMatchObject({ inGrammar: true, addressed: true });
    expect(transcript?.data.text).toMatch(/weather in berlin/i);
    const seqs = ofType(stored, 'user.audio').map((e) => e.data.inputSeq);
    expect(seqs).toContain(transcript!.data.audio.fromInputSeq);
    expect(seqs).toContain(transcript!.data.audio.toInputSeq);
    expect(transcript!.data.audio.durationMs).toBeGreaterThan(1000);
    // No client transcript: the only user content on the timeline is audio.
    expect(ofType(stored, 'user.text')).toEqual([]);
    const delegate = ofType(stored, 'assistant.delegate')[0];
    expect(delegate?.seq).toBeGreaterThan(transcript!.seq);
    expect(delegate?.data.query).toMatch(/weather in Berlin/);
  }, 120_000);

  it("hears a deployed function's example that the demo grammar does not have", async () => {
    const spec = {
      name: 'umbrella_advice',
      description: 'Whether to take an umbrella in a city.',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      examples: ['do I need an umbrella in Seattle'],
      keywords: ['umbrella'],
      kind: { type: 'module', source: "export default async () => ({ speech: 'Take one.' })" },
    };
    const deployed = await fetch(`${runtime.url}/v1/functions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(spec),
    });
    expect(deployed.status).toBe(201);
    // Sessions opened after the deploy hear its words.
    const c = await RealtimeClient.connect({ url: wsUrl });
    c.send({ type: 'session.update', session: { venus: { chunk_ms: 160 } } });
    c.startMicrophone();
    await c.silence(300);
    await c.speak(await tts.synthesize('Do I need an umbrella in Seattle', 'en-us'));
    await c.silence(1000);
    const completed = await c.waitFor(
      (e) => e.type === 'conversation.item.input_audio_transcription.completed',
      30_000,
    );
    expect(String(completed.transcript)).toMatch(/umbrella in seattle/);
    const heard = c.timeline.find((e) => e.type === 'user.transcript');
    expect(heard?.type === 'user.transcript' && heard.data.inGrammar).toBe(true);
    await c.close();
  }, 120_000);
});
