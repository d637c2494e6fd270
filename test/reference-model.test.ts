import { setTimeout as sleep } from 'node:timers/promises';
import { concatPcm, type ModelSession, type OutputStep, VenusError } from '@venus/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EspeakTts,
  pcm16ToFloat,
  ReferenceModelPort,
  resamplePcm16,
  SileroVad,
} from '../gpu-worker/src/reference-model/index.ts';
import { modelPortContract } from './contracts/model-port-contract.ts';

/**
 * The shipped reference model end to end: real Silero VAD through onnxruntime-node and real
 * eSpeak NG speech, in their worker threads, driven through the ModelPort interface at 160 ms chunks.
 */
const CHUNK_MS = 160;
/** How long a wait for a step's outcome may take; it only ends a hung test. */
const OUTCOME_BUDGET_MS = 30_000;
const CHUNK_24K = CHUNK_MS * 24;
const CHUNK_16K = CHUNK_MS * 16;

let port: ReferenceModelPort;
let tts: EspeakTts;
let vad: SileroVad;

beforeAll(async () => {
  [port, tts, vad] = await Promise.all([ReferenceModelPort.create(), EspeakTts.create(), SileroVad.create()]);
});

afterAll(async () => {
  await port?.close();
  tts?.close();
  await vad?.close();
});

/** Speech frames (p >= 0.5) in 24 kHz audio, as the VAD hears it at 16 kHz. */
async function speechFrames(pcm24k: Int16Array): Promise<number> {
  const probabilities = await vad.detect(pcm16ToFloat(resamplePcm16(pcm24k, 24_000, 16_000)));
  return probabilities.filter((p) => p >= 0.5).length;
}

const spans = (text: string) => text.match(/<delegate>[\s\S]*?<\/delegate>/g) ?? [];
const joinText = (steps: OutputStep[]) => steps.map((s) => s.text).join('');
const audioOf = (steps: OutputStep[]) => concatPcm(steps.flatMap((s) => (s.audio ? [s.audio] : [])));

/** Drives one session like a session host: 160 ms of user audio per step, typed text in between. */
class Conversation {
  private seq = 0;
  private chunk = 0;
  private atMs = 0;
  private userAudio: Int16Array = new Int16Array(0);

  constructor(readonly session: ModelSession) {}

  static async open(sessionId: string): Promise<Conversation> {
    return new Conversation(await port.openSession({ sessionId, incarnation: 0 }));
  }

  async say(text: string): Promise<void> {
    await this.session.appendText({ inputSeq: ++this.seq, itemId: `item_${this.seq}`, text });
  }

  /** User audio (16 kHz) to stream in 160 ms pieces over the next steps. */
  speak(pcm16k: Int16Array): void {
    this.userAudio = pcm16k;
  }

  async step(assistantAudible = false): Promise<OutputStep> {
    const piece = new Int16Array(CHUNK_16K);
    piece.set(this.userAudio.subarray(0, CHUNK_16K));
    this.userAudio = this.userAudio.subarray(Math.min(CHUNK_16K, this.userAudio.length));
    await this.session.appendAudio({ inputSeq: ++this.seq, pcm16k: piece });
    this.atMs += CHUNK_MS;
    return this.session.step({ chunk: this.chunk++, inputSeqCutoff: this.seq, atMs: this.atMs, assistantAudible });
  }

  /**
   * Steps until `done`, for as long as OUTCOME_BUDGET_MS of real time: speech arrives from the synthesis thread on their own time, so
   * a count of steps would be a race on a loaded machine. `maxSteps` is a logical bound instead (e.g.
   * how much of the user's audio may pass), never a wait.
   */
  async until(
    done: (s: OutputStep) => boolean,
    options: { audible?: boolean; maxSteps?: number } = {},
  ): Promise<OutputStep[]> {
    const steps: OutputStep[] = [];
    const started = Date.now();
    while (Date.now() - started < OUTCOME_BUDGET_MS) {
      const s = await this.step(options.audible);
      steps.push(s);
      if (done(s)) return steps;
      if (options.maxSteps !== undefined && steps.length >= options.maxSteps)
        throw new Error(`the expected step did not come within ${options.maxSteps} steps`);
      // Pacing only, as a microphone's chunks are; nothing waits on this pause.
      await sleep(2);
    }
    throw new Error('the expected step did not come');
  }
}

// One port serves the whole file (it takes seconds to start); the suite's cleanup leaves it open.
modelPortContract('reference model', async () => ({
  port,
  feed: async (session, input) => {
    await session.appendText({ inputSeq: input.next(), itemId: 'feed', text: 'hello' });
  },
  idle: async (session, input) => {
    await session.appendAudio({ inputSeq: input.next(), pcm16k: new Int16Array(16_000) });
    // Pacing only, as a microphone's chunks are: speech arrives from the synthesis thread on its own
    // time, and the contract steps until the outcome (repliesInRealTime), not for a count of steps.
    await sleep(2);
  },
  repliesInRealTime: true,
  cleanup: async () => {},
}));

describe('reference model: perception and speech', () => {
  it('Silero VAD hears synthesised speech as speech and zeros as silence', async () => {
    const speech = await tts.synthesize('The quick brown fox jumps over the lazy dog near the river bank.');
    const probabilities = await vad.detect(pcm16ToFloat(resamplePcm16(speech, 24_000, 16_000)));
    expect(Math.max(...probabilities)).toBeGreaterThan(0.9);
    expect(probabilities.filter((p) => p >= 0.5).length / probabilities.length).toBeGreaterThan(0.4);
    const silence = await vad.detect(new Float32Array(16_000));
    expect(Math.max(...silence)).toBeLessThan(0.5);
  });
});

describe('reference model: dialogue through the port', () => {
  it('answers a weather request with one delegate span and paced, non-empty speech', async () => {
    const c = await Conversation.open('weather');
    await c.say("What's the weather like in Paris?");
    const steps = await c.until((s) => s.turnFinished);
    const text = joinText(steps);
    expect(spans(text)).toEqual(['<delegate>What is the weather in Paris right now?</delegate>']);
    expect(steps.every((s) => s.decision === 'speak' && s.utteranceId === steps[0]?.utteranceId)).toBe(true);
    expect(steps.every((s) => (s.audio?.length ?? 0) <= CHUNK_24K)).toBe(true);
    expect(steps.at(-1)?.finishReason).toBe('completed');
    const audio = audioOf(steps);
    expect(audio.length).toBeGreaterThan(24_000);
    expect(await speechFrames(audio)).toBeGreaterThan(20);
    await c.session.close('done');
  });

  it('speaks a prefilled backend result', async () => {
    const c = await Conversation.open('prefill');
    const ack = await c.session.prefill({
      text: '<backend>It is 18 degrees and sunny in Paris.</backend>',
      attemptId: 'w1:0',
      mode: 'speak',
    });
    expect(ack).toEqual({ attemptId: 'w1:0', deduplicated: false });
    expect(
      (await c.session.prefill({ text: '<backend>again</backend>', attemptId: 'w1:0', mode: 'speak' })).deduplicated,
    ).toBe(true);
    const steps = await c.until((s) => s.turnFinished);
    expect(steps[0]?.speaksPrefill).toEqual({ attemptId: 'w1:0' });
    expect(joinText(steps)).toBe('It is 18 degrees and sunny in Paris.');
    expect(await speechFrames(audioOf(steps))).toBeGreaterThan(10);
  });

  it('keeps speaking through a typed backchannel', async () => {
    const c = await Conversation.open('backchannel');
    await c.say('what time is it in Tokyo');
    await c.until((s) => s.audio !== null);
    await c.say('mm-hm');
    const [overlap] = await c.until(() => true);
    expect(overlap?.interruption).toEqual({ action: 'continue', cause: 'backchannel', cancelsWork: false });
    expect(overlap?.audio).not.toBeNull();
    const after = await c.until(() => true);
    expect(after[0]?.audio?.length).toBeGreaterThan(0);
    expect(after[0]?.utteranceId).toBe(overlap?.utteranceId);
  });

  it('repairs on a typed correction with a continuation that delegates again', async () => {
    const c = await Conversation.open('repair');
    await c.say('weather in Paris please');
    const first = await c.until((s) => s.audio !== null);
    await c.say('actually, make it Rome');
    const [stop] = await c.until(() => true);
    expect(stop?.interruption).toEqual({ action: 'repair', cause: 'interruption', cancelsWork: true });
    expect(stop).toMatchObject({ turnFinished: true, finishReason: 'interrupted', utteranceId: first[0]?.utteranceId });
    const repair = await c.until((s) => s.turnFinished);
    expect(repair[0]?.continues).toEqual({ utteranceId: first[0]?.utteranceId });
    expect(repair[0]?.utteranceId).not.toBe(first[0]?.utteranceId);
    expect(spans(joinText(repair))).toEqual(['<delegate>What is the weather in Rome right now?</delegate>']);
  });

  it('parks for a new request, offers to resume after answering it, and resumes on "yes"', async () => {
    const c = await Conversation.open('park');
    await c.say('weather in Paris');
    const first = await c.until((s) => s.audio !== null);
    await c.say('what is 12 times 7?');
    const [parked] = await c.until(() => true);
    expect(parked?.interruption).toEqual({ action: 'park', cause: 'interruption', cancelsWork: false });
    await c.session.park({
      planId: 'plan_1',
      utteranceId: first[0]?.utteranceId ?? '',
      remainder: 'It may take a few seconds.',
    });
    const answer = await c.until((s) => s.turnFinished);
    expect(spans(joinText(answer))).toEqual(['<delegate>what is 12 times 7?</delegate>']);
    const offer = await c.until((s) => s.turnFinished);
    expect(offer[0]?.resumeOffer).toEqual({ planId: 'plan_1' });
    await c.say('yes');
    const resumed = await c.until((s) => s.turnFinished);
    expect(resumed[0]?.continues).toEqual({ planId: 'plan_1' });
    expect(joinText(resumed)).toBe('It may take a few seconds.');
    expect(audioOf(resumed).length).toBeGreaterThan(0);
  });

  it('stops speaking when the user talks over it for longer than 600 ms', async () => {
    const c = await Conversation.open('barge-in');
    await c.say('what time is it in New York');
    await c.until((s) => s.audio !== null);
    const speech = await tts.synthesize('No no, listen, I need to ask you about something completely different.');
    c.speak(resamplePcm16(speech, 24_000, 16_000));
    const steps = await c.until((s) => s.interruption !== undefined, { audible: true, maxSteps: 40 });
    expect(steps.some((s) => s.userSpeech?.state === 'started')).toBe(true);
    expect(steps.at(-1)).toMatchObject({
      interruption: { action: 'discard', cause: 'interruption', cancelsWork: false },
      turnFinished: true,
      finishReason: 'interrupted',
    });
  });

  it('fences a superseded incarnation and refuses to open once closed', async () => {
    const old = await port.openSession({ sessionId: 'failover', incarnation: 0 });
    const fresh = await port.openSession({ sessionId: 'failover', incarnation: 1 });
    const request = { chunk: 0, inputSeqCutoff: 0, atMs: 0, assistantAudible: false };
    await expect(old.step(request)).rejects.toMatchObject({ code: 'stale_incarnation' });
    await expect(old.appendText({ inputSeq: 1, itemId: 'i', text: 'hi' })).rejects.toMatchObject({
      code: 'stale_incarnation',
    });
    await expect(port.openSession({ sessionId: 'failover', incarnation: 1 })).rejects.toMatchObject({
      code: 'stale_incarnation',
    });
    expect((await fresh.step(request)).decision).toBe('listen');
    const caps = await port.capabilities();
    expect(caps).toMatchObject({
      model: 'venus-reference',
      audioInput: true,
      videoInput: false,
      nativeAudioOutput: true,
    });
    expect(caps.maxSessions).toBeGreaterThan(0);
    await port.close();
    const closed = port.openSession({ sessionId: 'late', incarnation: 0 });
    await expect(closed).rejects.toBeInstanceOf(VenusError);
    await expect(closed).rejects.toMatchObject({ code: 'model_unavailable' });
  });
});
