import { setTimeout as sleep } from 'node:timers/promises';
import { EspeakTts, resamplePcm16 } from '@venus/gpu-worker';
import { type ContextEntry, type ModelSession, type OutputStep, VenusError } from '@venus/protocol';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  CascadeModelPort,
  cascadeConfigFromEnv,
  OpenAiEndpoints,
} from '../gpu-worker/src/model-ports/cascade/index.ts';
import { modelPortContract } from './contracts/model-port-contract.ts';
import { OpenAiCompatibleServer } from './fixtures/openai-compatible-server.ts';

/**
 * The cascade port end to end: real Silero VAD and turn-taking in its worker thread, real HTTP to
 * a local server that speaks the OpenAI wire formats (multipart transcription, streamed chat
 * completions, speech), driven through the ModelPort interface at 160 ms chunks.
 */
const CHUNK_MS = 160;
/** How long a wait for a step's outcome may take; it only ends a hung test. */
const OUTCOME_BUDGET_MS = 30_000;
const CHUNK_16K = CHUNK_MS * 16;
const CHUNK_24K = CHUNK_MS * 24;
const API_KEY = 'sk-test-cascade';

let server: OpenAiCompatibleServer;
let port: CascadeModelPort;
let tts: EspeakTts;

beforeAll(async () => {
  server = await OpenAiCompatibleServer.start({ apiKey: API_KEY });
  [port, tts] = await Promise.all([
    CascadeModelPort.fromEnv({
      VENUS_CASCADE_BASE_URL: server.baseUrl,
      VENUS_CASCADE_API_KEY: API_KEY,
      VENUS_CASCADE_CHAT_MODEL: 'fixture-chat',
      VENUS_CASCADE_TIMEOUT_MS: '5000',
    }),
    EspeakTts.create(),
  ]);
});

afterAll(async () => {
  await port?.close();
  tts?.close();
  await server?.close();
});

beforeEach(() => server.reset());

const spans = (text: string) => text.match(/<delegate>[\s\S]*?<\/delegate>/g) ?? [];
const joinText = (steps: OutputStep[]) => steps.map((s) => s.text).join('');
const audioSamples = (steps: OutputStep[]) => steps.reduce((n, s) => n + (s.audio?.length ?? 0), 0);

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

  async restore(entry: ContextEntry): Promise<void> {
    if (!this.session.appendHistory) throw new Error('the port takes no restored history');
    await this.session.appendHistory({ inputSeq: ++this.seq, itemId: `item_${this.seq}`, ...entry });
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
   * Steps until `done`, for as long as OUTCOME_BUDGET_MS of real time: the endpoints answer on their own time, so
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

  /** Steps until one fails (the endpoint's failure reaches the thread on its own time); returns its error. */
  async untilFailure(): Promise<unknown> {
    const started = Date.now();
    while (Date.now() - started < OUTCOME_BUDGET_MS) {
      const failure = await this.step().then(
        () => null,
        (err: unknown) => err,
      );
      if (failure) return failure;
      // Pacing only; nothing waits on this pause.
      await sleep(2);
    }
    throw new Error('no step failed');
  }
}

async function userSpeech(text: string): Promise<Int16Array> {
  return resamplePcm16(await tts.synthesize(text), 24_000, 16_000);
}

// One port serves the whole file; the suite's cleanup leaves it open.
modelPortContract('cascade over OpenAI-compatible endpoints', async () => ({
  port,
  feed: async (session, input) => {
    await session.appendText({ inputSeq: input.next(), itemId: 'feed', text: 'hello' });
  },
  idle: async (session, input) => {
    await session.appendAudio({ inputSeq: input.next(), pcm16k: new Int16Array(16_000) });
    // Pacing only, as a microphone's chunks are: the endpoints answer on their own time, and the
    // contract steps until the outcome (repliesInRealTime), not for a count of steps.
    await sleep(2);
  },
  repliesInRealTime: true,
  cleanup: async () => {},
}));

describe('cascade port: turns', () => {
  it('transcribes a spoken turn, streams the reply with its delegate span and speaks it sentence by sentence', async () => {
    server.transcripts.push("What's the weather like in Paris?");
    const chunks = [
      'Let me check the weather ',
      'in Paris. <dele',
      'gate>What is the weather in Paris right now?</del',
      'egate>It may take a few seconds.',
    ];
    server.chatScripts.push({ chunks });
    const c = await Conversation.open('spoken-turn');
    const speech = await userSpeech("What's the weather like in Paris?");
    c.speak(speech);
    const steps = await c.until((s) => s.turnFinished);

    expect(steps.some((s) => s.userSpeech?.state === 'started')).toBe(true);
    expect(steps.some((s) => s.userSpeech?.state === 'stopped')).toBe(true);
    expect(server.transcriptions).toHaveLength(1);
    const upload = server.transcriptions[0]!;
    expect(upload).toMatchObject({ model: 'whisper-1', sampleRateHz: 16_000, channels: 1, filename: 'turn.wav' });
    // The whole utterance went up: nothing of the speech was cut off at either end.
    expect(upload.samples.length).toBeGreaterThanOrEqual(speech.length);

    expect(server.chats).toHaveLength(1);
    const request = server.chats[0]!;
    expect(request.model).toBe('fixture-chat');
    expect(request.messages[0]?.role).toBe('system');
    expect(request.messages[0]?.content).toContain('<delegate>');
    expect(request.messages.at(-1)).toEqual({ role: 'user', content: "What's the weather like in Paris?" });

    const spoken = steps.filter((s) => s.utteranceId !== null);
    const id = spoken[0]?.utteranceId;
    expect(spoken.every((s) => s.utteranceId === id && s.decision === 'speak')).toBe(true);
    expect(joinText(spoken)).toBe(chunks.join(''));
    expect(spans(joinText(spoken))).toEqual(['<delegate>What is the weather in Paris right now?</delegate>']);
    // Speech per sentence, never the delegate span.
    expect(server.speeches.map((s) => s.input)).toEqual([
      'Let me check the weather in Paris.',
      'It may take a few seconds.',
    ]);
    expect(spoken.every((s) => (s.audio?.length ?? 0) <= CHUNK_24K)).toBe(true);
    expect(audioSamples(spoken)).toBe(server.speeches.reduce((n, s) => n + s.samples, 0));
    expect(steps.at(-1)).toMatchObject({ turnFinished: true, finishReason: 'completed' });
    await c.session.close('done');
  });

  it('answers typed text without transcription, with what was said before in the context', async () => {
    const c = await Conversation.open('typed');
    await c.say('hi there');
    await c.until((s) => s.turnFinished);
    server.chatScripts.push({ chunks: ['It is noon in Tokyo.'] });
    await c.say('and what time is it in Tokyo?');
    const steps = await c.until((s) => s.turnFinished);
    expect(joinText(steps)).toBe('It is noon in Tokyo.');
    expect(server.transcriptions).toHaveLength(0);
    expect(server.chats[1]?.messages.slice(1)).toEqual([
      { role: 'user', content: 'hi there' },
      { role: 'assistant', content: 'Hello! How can I help you today?' },
      { role: 'user', content: 'and what time is it in Tokyo?' },
    ]);
    await c.session.close('done');
  });

  it('takes restored history and one-shot instructions through its thread into the chat request', async () => {
    const c = await Conversation.open('restored');
    await c.restore({ role: 'assistant', text: 'Your order shipped.' });
    await c.restore({ role: 'system', text: 'Be brief.' });
    expect(c.session.instructNextResponse).toBeDefined();
    await c.session.instructNextResponse?.({ instructions: 'Answer in French.' });
    await c.say('what did you just tell me?');
    await c.until((s) => s.turnFinished);
    const request = server.chats.at(-1)!;
    expect(request.messages[0]?.content).toContain('Be brief.\nAnswer in French.');
    expect(request.messages.slice(1)).toEqual([
      { role: 'assistant', content: 'Your order shipped.' },
      { role: 'user', content: 'what did you just tell me?' },
    ]);
    await c.session.close('done');
  });

  it('speaks a prefilled backend result, and keeps a silent one in the context only', async () => {
    const c = await Conversation.open('prefill');
    server.chatScripts.push({ chunks: ['It is 18 degrees ', 'and sunny in Paris.'] });
    const request = { text: '<backend>It is 18 degrees and sunny in Paris.</backend>', attemptId: 'w1:0' };
    expect(await c.session.prefill({ ...request, mode: 'speak' })).toEqual({ attemptId: 'w1:0', deduplicated: false });
    expect((await c.session.prefill({ ...request, mode: 'speak' })).deduplicated).toBe(true);
    const steps = await c.until((s) => s.turnFinished);
    const spoken = steps.filter((s) => s.utteranceId !== null);
    expect(spoken[0]?.speaksPrefill).toEqual({ attemptId: 'w1:0' });
    expect(joinText(spoken)).toBe('It is 18 degrees and sunny in Paris.');
    expect(audioSamples(spoken)).toBeGreaterThan(0);
    expect(server.chats[0]?.messages.at(-1)).toEqual({
      role: 'user',
      content: '<backend>It is 18 degrees and sunny in Paris.</backend>',
    });

    await c.session.prefill({ text: '<backend>Tokyo: 14:05.</backend>', attemptId: 'w2:0', mode: 'silent' });
    await c.until(() => true);
    expect(server.chats).toHaveLength(1);
    await c.say('thanks');
    await c.until((s) => s.turnFinished);
    // Consecutive user-side messages are merged: some local chat templates insist on alternation.
    expect(server.chats[1]?.messages.slice(-2)).toEqual([
      { role: 'assistant', content: 'It is 18 degrees and sunny in Paris.' },
      { role: 'user', content: '<backend>Tokyo: 14:05.</backend>\nthanks' },
    ]);
    await c.session.close('done');
  });
});

describe('cascade port: failures and interruptions', () => {
  it('fails one step with model_unavailable when an endpoint answers 500, and the session lives on', async () => {
    const c = await Conversation.open('failure');
    server.chatScripts.push({ status: 500 });
    await c.say('hello');
    const failure = await c.untilFailure();
    expect(VenusError.isInstance(failure)).toBe(true);
    expect(failure).toMatchObject({ code: 'model_unavailable', retryable: true });
    expect((await c.step()).decision).toBe('listen');

    // A stream cut off mid-reply closes the utterance the host already saw.
    server.chatScripts.push({ chunks: ['First sentence here. '], hang: true });
    await c.say('hello again');
    const started = await c.until((s) => s.utteranceId !== null);
    const id = started.at(-1)?.utteranceId;
    server.breakOpenStreams();
    expect(await c.untilFailure()).toMatchObject({ code: 'model_unavailable', retryable: true });
    const [closed] = await c.until(() => true);
    expect(closed).toMatchObject({ utteranceId: id, turnFinished: true, finishReason: 'interrupted' });

    await c.say('are you there?');
    const steps = await c.until((s) => s.turnFinished);
    expect(joinText(steps)).toBe('Hello! How can I help you today?');
    expect(audioSamples(steps)).toBeGreaterThan(0);
    await c.session.close('done');
  });

  it('stops on sustained speech over it, aborts the chat request in flight, and keeps only what was heard', async () => {
    const sentence = 'Once upon a time, there was a lighthouse keeper.';
    server.chatScripts.push({ chunks: [`${sentence} `, 'He lived '], hang: true });
    const c = await Conversation.open('barge-in');
    await c.say('tell me a long story');
    const first = await c.until((s) => s.audio !== null);
    const id = first.at(-1)?.utteranceId as string;
    expect(server.chats[0]?.aborted).toBe(false);

    c.speak(await userSpeech('No no, wait, I want to ask you about something completely different.'));
    const steps = await c.until((s) => s.interruption !== undefined, { audible: true, maxSteps: 60 });
    expect(steps.at(-1)).toMatchObject({
      utteranceId: id,
      interruption: { action: 'discard', cause: 'interruption', cancelsWork: false },
      turnFinished: true,
      finishReason: 'interrupted',
    });
    await server.chats[0]?.closed;
    expect(server.chats[0]?.aborted).toBe(true);

    // The host reports 400 ms heard; the user's own words become the next turn.
    await c.session.playbackAck({ utteranceId: id, playedMs: 400, final: true });
    server.transcripts.push('What time is it in Tokyo?');
    await c.until(() => server.chats.length === 2);
    expect(server.chats[1]?.messages.slice(1)).toEqual([
      { role: 'user', content: 'tell me a long story' },
      { role: 'assistant', content: 'Once upon a time,' },
      { role: 'user', content: 'What time is it in Tokyo?' },
    ]);
    await c.session.close('done');
  });
});

describe('OpenAI-compatible endpoints', () => {
  const config = (overrides: Record<string, string> = {}) =>
    cascadeConfigFromEnv({ VENUS_CASCADE_BASE_URL: server.baseUrl, VENUS_CASCADE_API_KEY: API_KEY, ...overrides });

  it('takes WAV speech at another rate and resamples it to 24 kHz', async () => {
    const wavServer = await OpenAiCompatibleServer.start({ wavRateHz: 22_050 });
    try {
      const endpoints = new OpenAiEndpoints(
        cascadeConfigFromEnv({ VENUS_CASCADE_BASE_URL: wavServer.baseUrl, VENUS_CASCADE_SPEECH_FORMAT: 'wav' }),
      );
      const pcm = await endpoints.speak('Twenty characters!!', undefined, new AbortController().signal);
      expect(wavServer.speeches[0]?.format).toBe('wav');
      expect(Math.abs(pcm.length - wavServer.speechSamples('Twenty characters!!'))).toBeLessThanOrEqual(2);
    } finally {
      await wavServer.close();
    }
  });

  it('reports a refused key as model_unavailable that is not worth retrying', async () => {
    const endpoints = new OpenAiEndpoints(config({ VENUS_CASCADE_API_KEY: 'sk-wrong' }));
    const err = await endpoints.transcribe(new Int16Array(1600), new AbortController().signal).catch((e) => e);
    expect(err).toMatchObject({ code: 'model_unavailable', retryable: false });
    expect(String(err.message)).toContain('401');
  });

  it('reports a speech server error as retryable model_unavailable', async () => {
    server.speechFailures.push(503);
    const err = await new OpenAiEndpoints(config())
      .speak('Hello.', undefined, new AbortController().signal)
      .catch((e) => e);
    expect(err).toMatchObject({ code: 'model_unavailable', retryable: true });
    expect(String(err.message)).toContain('503');
  });

  it('times out a chat stream that goes quiet', async () => {
    server.chatScripts.push({ chunks: ['Hel'], hang: true });
    const endpoints = new OpenAiEndpoints(config({ VENUS_CASCADE_TIMEOUT_MS: '200' }));
    const deltas: string[] = [];
    const err = await (async () => {
      for await (const delta of endpoints.chat([{ role: 'user', content: 'hi' }], new AbortController().signal))
        deltas.push(delta);
    })().catch((e) => e);
    expect(deltas).toEqual(['Hel']);
    expect(err).toMatchObject({ code: 'model_unavailable', retryable: true });
    expect(String(err.message)).toContain('timed out');
    await server.chats[0]?.closed;
    expect(server.chats[0]?.aborted).toBe(true);
  });

  it('refuses a configuration without an endpoint', () => {
    expect(() => cascadeConfigFromEnv({})).toThrow(/VENUS_CASCADE_BASE_URL/);
  });
});
