import { EspeakTts } from '@venus/gpu-worker';
import { createBuiltinFunctions } from '@venus/harness-functions';
import type { TimelineEvent } from '@venus/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RealtimeClient } from '../embedded/demo/realtime-client.ts';
import { type EmbeddedRuntime, startEmbeddedRuntime } from '../embedded/embedded-runtime.ts';

/**
 * End to end over the public WebSocket against the embedded runtime (edge + session host +
 * reference model + in-process harness): a delegation delivered with acknowledged playback, and
 * interruptions while the assistant speaks exercising discard, repair and park on the timeline.
 */
let runtime: EmbeddedRuntime;
let tts: EspeakTts;
let wsUrl: string;

beforeAll(async () => {
  runtime = await startEmbeddedRuntime({ port: 0, functions: createBuiltinFunctions({ latencyMs: 1500 }) });
  wsUrl = `${runtime.url.replace('http', 'ws')}/v1/realtime`;
  tts = await EspeakTts.create();
}, 60_000);
afterAll(async () => {
  tts.close();
  await runtime.close();
});

async function connect(): Promise<RealtimeClient> {
  const client = await RealtimeClient.connect({ url: wsUrl, acknowledgePlayback: true });
  client.send({ type: 'session.update', session: { venus: { chunk_ms: 160, playback_acks: true } } });
  client.startMicrophone();
  return client;
}

const ofType = <T extends TimelineEvent['type']>(c: RealtimeClient, type: T) =>
  c.timeline.filter((e): e is Extract<TimelineEvent, { type: T }> => e.type === type);

/** Starts a weather reply and resolves once the user has heard some of it. */
async function assistantSpeaking(c: RealtimeClient): Promise<string> {
  c.say("What's the weather in Paris?");
  const first = await c.waitFor((e) => e.type === 'response.output_audio.delta');
  await c.silence(700);
  return String(first.item_id);
}

describe('end to end over the WebSocket', () => {
  it.concurrent('typed request -> delegate -> function -> backend -> spoken reply -> playback acknowledged -> DELIVERED', async () => {
    const c = await connect();
    c.say('What time is it in Tokyo?');
    const delivered = await c.waitForTimeline((e) => e.type === 'work.state' && e.data.state === 'DELIVERED', 45_000);
    if (delivered.type !== 'work.state') throw new Error('unreachable');
    const workId = delivered.data.workId;
    const states = ofType(c, 'work.state')
      .filter((e) => e.data.workId === workId)
      .map((e) => e.data.state);
    expect(states).toEqual(['QUEUED', 'RUNNING', 'COMPLETED', 'DELIVERING', 'DELIVERED']);
    const delegate = ofType(c, 'assistant.delegate').find((e) => e.data.workId === workId);
    expect(delegate?.data.query).toMatch(/Tokyo/);
    // The delegate span is never displayed: no transcript delta carries it.
    const transcript = c.events
      .filter((e) => e.type === 'response.output_audio_transcript.delta')
      .map((e) => String(e.delta))
      .join('');
    expect(transcript).not.toMatch(/delegate/i);
    expect(transcript).toMatch(/in Tokyo\./);
    // The reply that spoke the result was acknowledged to its end by this client.
    const admitted = ofType(c, 'work.admitted').find((e) => e.data.workId === workId)!;
    const resultUtterance = ofType(c, 'assistant.utterance').find(
      (e) => e.seq > admitted.seq && e.data.phase === 'started',
    )!;
    const acks = ofType(c, 'playback.ack').filter((e) => e.data.utteranceId === resultUtterance.data.utteranceId);
    expect(acks.length).toBeGreaterThan(0);
    expect(acks.every((a) => a.data.source === 'client')).toBe(true);
    expect(c.events.some((e) => e.type === 'venus.work.result')).toBe(true);
    await c.close();
  }, 90_000);

  it.concurrent('an audio barge-in discards the rest of the reply and sends the OpenAI barge-in signals', async () => {
    const c = await connect();
    const itemId = await assistantSpeaking(c);
    await c.speak(await tts.synthesize('Wait, wait, stop there, I need to ask something else.', 'en-us+m3'));
    const intr = await c.waitForTimeline(
      (e) => e.type === 'assistant.interruption' && e.data.action !== 'continue',
      20_000,
    );
    if (intr.type !== 'assistant.interruption') throw new Error('unreachable');
    expect(intr.data).toMatchObject({ action: 'discard', cause: 'interruption', utteranceId: itemId });
    expect(
      'Let me check the weather in Paris. It may take a few seconds'.startsWith(intr.data.heardText.slice(0, 30)),
    ).toBe(true);
    await c.waitFor((e) => e.type === 'output_audio_buffer.cleared');
    expect(c.events.some((e) => e.type === 'input_audio_buffer.speech_started')).toBe(true);
    const done = await c.waitFor(
      (e) => e.type === 'response.done' && (e.response as { id?: string; status?: string }).status === 'cancelled',
    );
    expect(done).toBeDefined();
    await c.close();
  }, 90_000);

  it.concurrent('a typed correction repairs only the unspoken continuation and re-delegates', async () => {
    const c = await connect();
    const itemId = await assistantSpeaking(c);
    c.say('Actually, make it Rome.');
    const intr = await c.waitForTimeline(
      (e) => e.type === 'assistant.interruption' && e.data.action === 'repair',
      20_000,
    );
    if (intr.type !== 'assistant.interruption') throw new Error('unreachable');
    expect(intr.data.utteranceId).toBe(itemId);
    const repaired = await c.waitForTimeline((e) => e.type === 'assistant.utterance' && e.data.continues === itemId);
    expect(repaired).toBeDefined();
    const rome = await c.waitForTimeline((e) => e.type === 'assistant.delegate' && /Rome/.test(e.data.query));
    expect(rome.seq).toBeGreaterThan(intr.seq);
    // The Paris work of the repaired turn is cancelled and never spoken.
    const paris = ofType(c, 'assistant.delegate').find((e) => /Paris/.test(e.data.query));
    if (paris) {
      await c.waitForTimeline(
        (e) => e.type === 'work.state' && e.data.workId === paris.data.workId && e.data.state === 'CANCELLED',
      );
      expect(ofType(c, 'work.admitted').some((e) => e.data.workId === paris.data.workId)).toBe(false);
    }
    await c.close();
  }, 90_000);

  it.concurrent('a typed new request parks the plan, follows the request, then offers and resumes it', async () => {
    const c = await connect();
    await assistantSpeaking(c);
    c.say('What time is it in Tokyo?');
    const intr = await c.waitForTimeline(
      (e) => e.type === 'assistant.interruption' && e.data.action === 'park',
      20_000,
    );
    if (intr.type !== 'assistant.interruption') throw new Error('unreachable');
    const parked = await c.waitForTimeline((e) => e.type === 'assistant.parked');
    if (parked.type !== 'assistant.parked') throw new Error('unreachable');
    expect(parked.data.planId).toBe(intr.data.planId);
    expect(parked.data.remainder.length).toBeGreaterThan(0);
    await c.waitForTimeline((e) => e.type === 'assistant.resume_offer', 40_000);
    await c.silence(600);
    c.say('Yes please.');
    const resumed = await c.waitForTimeline((e) => e.type === 'assistant.resumed', 20_000);
    if (resumed.type !== 'assistant.resumed') throw new Error('unreachable');
    expect(resumed.data.planId).toBe(parked.data.planId);
    await c.close();
  }, 120_000);

  it.concurrent('a spoken backchannel is talked through: venus events only, no OpenAI barge-in signal', async () => {
    const c = await connect();
    const itemId = await assistantSpeaking(c);
    const before = c.events.length;
    await c.speak(await tts.synthesize('uh-huh', 'en-us+f3'));
    const intr = await c.waitForTimeline((e) => e.type === 'assistant.interruption', 20_000);
    if (intr.type !== 'assistant.interruption') throw new Error('unreachable');
    expect(intr.data).toMatchObject({ action: 'continue', cause: 'backchannel', utteranceId: itemId });
    await c.silence(500);
    const after = c.events.slice(before).map((e) => e.type);
    expect(after).toContain('venus.user.speech');
    expect(after).not.toContain('input_audio_buffer.speech_started');
    expect(after).not.toContain('output_audio_buffer.cleared');
    // The assistant kept talking: more audio of the same item arrived after the backchannel.
    const more = c.events.slice(before).filter((e) => e.type === 'response.output_audio.delta' && e.item_id === itemId);
    expect(more.length).toBeGreaterThan(0);
    await c.close();
  }, 90_000);

  it.concurrent('"never mind" after a voice barge-in cancels the running work and nothing about it is spoken', async () => {
    const c = await connect();
    c.say("What's the weather in Paris?");
    const delegate = await c.waitForTimeline((e) => e.type === 'assistant.delegate');
    if (delegate.type !== 'assistant.delegate') throw new Error('unreachable');
    const workId = delegate.data.workId;
    const speech = c.speak(await tts.synthesize('No no no, wait a moment, please stop.', 'en-us+m3'));
    await c.waitForTimeline((e) => e.type === 'assistant.interruption' && e.data.action === 'discard', 20_000);
    // The transcript arrives after voice activity already stopped the assistant.
    c.say('Never mind.');
    await speech;
    await c.waitForTimeline((e) => e.type === 'work.state' && e.data.workId === workId && e.data.state === 'CANCELLED');
    await c.silence(2500);
    expect(ofType(c, 'work.admitted').some((e) => e.data.workId === workId)).toBe(false);
    expect(ofType(c, 'work.result').some((e) => e.data.result.workId === workId)).toBe(false);
    await c.close();
  }, 90_000);
});
