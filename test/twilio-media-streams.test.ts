import { EspeakTts } from '@venus/gpu-worker';
import { createBuiltinFunctions } from '@venus/harness-functions';
import type { TimelineEvent } from '@venus/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { encodeMulaw } from '../edge/src/audio/g711.ts';
import { StreamingResampler } from '../edge/src/audio/streaming-resampler.ts';
import { type EmbeddedRuntime, startEmbeddedRuntime } from '../embedded/embedded-runtime.ts';
import { until } from './support/until.ts';

/**
 * A scripted Twilio: it fetches TwiML from the webhook route with an API key, opens the Media
 * Streams WebSocket it names, sends `connected` and `start` with the signed token, then streams the
 * caller's voice (eSpeak speech, μ-law 8 kHz) as 20 ms `media` frames in real time and echoes each
 * `mark` once the audio before it has arrived (a phone plays what it receives). Outcomes are read
 * on the session's stored timeline; waits are for events, never timed assertions.
 */
const API_KEY = 'sk-venus-twilio-test';
const WAIT_MS = 60_000;

let runtime: EmbeddedRuntime;
let tts: EspeakTts;

beforeAll(async () => {
  runtime = await startEmbeddedRuntime({
    port: 0,
    apiKeys: [API_KEY],
    functions: createBuiltinFunctions({ latencyMs: 1500 }),
  });
  tts = await EspeakTts.create();
}, 60_000);
afterAll(async () => {
  tts?.close();
  await runtime?.close();
});

async function mulawSpeech(text: string, voice = 'en-us'): Promise<Uint8Array> {
  const pcm24k = await tts.synthesize(text, voice);
  return encodeMulaw(new StreamingResampler(24_000, 8_000).process(pcm24k));
}

interface Outbound {
  event: string;
  media?: { payload: string };
  mark?: { name: string };
}

class ScriptedTwilio {
  readonly received: Outbound[] = [];
  readonly #ws: WebSocket;
  readonly #queue: Uint8Array[] = [];
  /** Media frames sent so far, and whether queued speech is being sent. */
  #sent = 0;
  #speaking = false;
  #timer: ReturnType<typeof setInterval> | undefined;
  sessionId: string | undefined;

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.on('message', (data) => {
      const message = JSON.parse(String(data)) as Outbound;
      this.received.push(message);
      // Frames arrive at the pace they play: a mark's audio has been heard when the mark arrives.
      if (message.event === 'mark') this.#send({ event: 'mark', streamSid: 'MZ1', mark: message.mark });
    });
  }

  static async call(): Promise<ScriptedTwilio> {
    const response = await fetch(`${runtime.url}/v1/telephony/twilio/twiml?api_key=${API_KEY}&voice=en-us`, {
      method: 'POST',
      body: new URLSearchParams({ CallSid: 'CA1', From: '+15550001', To: '+15550002' }),
    });
    expect(response.status).toBe(200);
    const twiml = await response.text();
    const url = /<Stream url="([^"]+)">/.exec(twiml)?.[1];
    const token = /<Parameter name="venus_token" value="([^"]+)"\/>/.exec(twiml)?.[1];
    expect(url).toMatch(/^ws:\/\/.+\/v1\/telephony\/twilio$/);
    expect(token).toMatch(/^ek_/);
    const ws = new WebSocket(url!);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const call = new ScriptedTwilio(ws);
    const sessions = new Set<string>();
    const off = runtime.host.onFrame((frame) => {
      if (frame.kind === 'timeline' && frame.event.type === 'session.config') sessions.add(frame.session);
    });
    call.#send({ event: 'connected', protocol: 'Call', version: '1.0.0' });
    call.#send({
      event: 'start',
      sequenceNumber: '1',
      streamSid: 'MZ1',
      start: {
        streamSid: 'MZ1',
        callSid: 'CA1',
        tracks: ['inbound'],
        customParameters: { venus_token: token },
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      },
    });
    await until('the call opened a session', () => sessions.size > 0, WAIT_MS);
    off();
    call.sessionId = [...sessions][0];
    call.#timer = setInterval(() => call.#frame(), 20);
    return call;
  }

  /** Queues speech on the caller's line; resolves once it has all been sent. */
  async speak(mulaw: Uint8Array): Promise<void> {
    // Whole 20 ms frames (the last one padded with silence), so what follows stays on the frame grid.
    for (let at = 0; at < mulaw.length; at += 160) {
      const frame = new Uint8Array(160).fill(0xff);
      frame.set(mulaw.subarray(at, at + 160));
      this.#queue.push(frame);
    }
    await until('the speech was sent', () => this.#queue.length === 0, WAIT_MS);
  }

  dtmf(digit: string): void {
    this.#send({ event: 'dtmf', streamSid: 'MZ1', sequenceNumber: '9', dtmf: { track: 'inbound_track', digit } });
  }

  count(event: string): number {
    return this.received.filter((m) => m.event === event).length;
  }

  async timeline(): Promise<TimelineEvent[]> {
    return runtime.store.read(this.sessionId!);
  }

  async waitForTimeline(what: string, predicate: (e: TimelineEvent) => boolean): Promise<TimelineEvent> {
    let found: TimelineEvent | undefined;
    await until(
      what,
      () => found !== undefined,
      WAIT_MS,
      async () => {
        found = (await this.timeline()).find(predicate);
      },
    );
    return found!;
  }

  hangUp(): void {
    clearInterval(this.#timer);
    this.#send({ event: 'stop', streamSid: 'MZ1', stop: { callSid: 'CA1' } });
    this.#ws.close();
  }

  #frame(): void {
    // Speech starts on a 160 ms boundary of the call's audio (8 frames: whole numbers of the worker's
    // 32 ms VAD frames and 80 ms word steps), so every run hears the same samples cut the same way
    // whatever the timers did (the backchannel test passes at each of the 8 alignments; before the
    // head's STOP_ROWS rule, 3 of them were heard as an interruption); between lines the caller's
    // line carries silence.
    if (!this.#speaking && this.#queue.length > 0 && this.#sent % 8 === 0) this.#speaking = true;
    const frame = (this.#speaking ? this.#queue.shift() : undefined) ?? new Uint8Array(160).fill(0xff);
    if (this.#queue.length === 0) this.#speaking = false;
    this.#sent += 1;
    this.#send({
      event: 'media',
      streamSid: 'MZ1',
      media: { track: 'inbound', payload: Buffer.from(frame).toString('base64') },
    });
  }

  #send(message: unknown): void {
    if (this.#ws.readyState === WebSocket.OPEN) this.#ws.send(JSON.stringify(message));
  }
}

const of = <T extends TimelineEvent['type']>(events: TimelineEvent[], type: T) =>
  events.filter((e): e is Extract<TimelineEvent, { type: T }> => e.type === type);

describe('Twilio Media Streams against the embedded runtime', () => {
  it('a spoken request is delegated, its result spoken as media, and DELIVERED after its mark came back', async () => {
    const call = await ScriptedTwilio.call();
    await call.speak(await mulawSpeech('What time is it in Tokyo?'));
    const delivered = await call.waitForTimeline(
      'the result delivered',
      (e) => e.type === 'work.state' && e.data.state === 'DELIVERED',
    );
    if (delivered.type !== 'work.state') throw new Error('unreachable');
    call.dtmf('7');
    await call.waitForTimeline('the DTMF digit', (e) => e.type === 'user.dtmf' && e.data.digit === '7');
    const events = await call.timeline();
    const workId = delivered.data.workId;
    expect(of(events, 'assistant.delegate').find((e) => e.data.workId === workId)?.data.query).toMatch(/Tokyo/);
    // The utterance that spoke the result, and the acknowledgement of its whole audio (a mark's echo).
    const admitted = of(events, 'work.admitted').find((e) => e.data.workId === workId)!;
    const spoken = of(events, 'assistant.utterance').find((e) => e.seq > admitted.seq && e.data.phase === 'started')!;
    const audio = of(events, 'assistant.audio').filter((e) => e.data.utteranceId === spoken.data.utteranceId);
    const lengthMs = Math.max(...audio.map((e) => e.data.startMs + e.data.durationMs));
    const fullAck = of(events, 'playback.ack').find(
      (e) => e.data.utteranceId === spoken.data.utteranceId && e.data.playedMs >= lengthMs,
    );
    expect(fullAck?.data.source).toBe('client');
    expect(fullAck!.seq).toBeLessThan(delivered.seq);
    // What was sent: 20 ms μ-law frames, marks after them, and never a clear (nobody interrupted).
    expect(call.count('media')).toBeGreaterThan(lengthMs / 20);
    expect(call.count('mark')).toBeGreaterThan(0);
    expect(call.count('clear')).toBe(0);
    const frame = call.received.find((m) => m.event === 'media')!;
    expect(Buffer.from(frame.media!.payload, 'base64').length).toBe(160);
    call.hangUp();
    await call.waitForTimeline('the session closed', (e) => e.type === 'session.closed');
  }, 120_000);

  it('a backchannel never clears; an interruption clears what is queued', async () => {
    // All speech is made before the call, so the caller's lines follow each other as scripted.
    const request = await mulawSpeech("What's the weather in Paris?");
    const uhHuh = await mulawSpeech('uh-huh', 'en-us+f3');
    const stop = await mulawSpeech('Wait, wait, stop there, I need to ask something else.', 'en-us+m3');
    const call = await ScriptedTwilio.call();
    await call.speak(request);
    await until('assistant audio arrives', () => call.count('media') > 25, WAIT_MS);
    await call.speak(uhHuh);
    const backchannel = await call.waitForTimeline(
      'the backchannel decision',
      (e) => e.type === 'assistant.interruption',
    );
    if (backchannel.type !== 'assistant.interruption') throw new Error('unreachable');
    expect(backchannel.data).toMatchObject({ action: 'continue', cause: 'backchannel' });
    expect(call.count('clear')).toBe(0);
    // The policy may judge a backchannel from its first frames or only at its end; either way the
    // interruption is a speech burst of its own only once the voice activity detector has heard the
    // backchannel end.
    const began = (await call.timeline())
      .filter((e) => e.type === 'user.speech' && e.data.state === 'started' && e.seq < backchannel.seq)
      .at(-1);
    await call.waitForTimeline(
      'the end of the backchannel',
      (e) => e.type === 'user.speech' && e.data.state === 'stopped' && e.seq > (began?.seq ?? backchannel.seq),
    );
    await call.speak(stop);
    const cut = await call.waitForTimeline(
      'the interruption',
      (e) => e.type === 'assistant.interruption' && e.data.action !== 'continue',
    );
    if (cut.type !== 'assistant.interruption') throw new Error('unreachable');
    expect(cut.data.cause).toBe('interruption');
    await until('clear sent', () => call.count('clear') === 1, WAIT_MS);
    // The cut utterance's remaining audio is never sent after the clear.
    const events = await call.timeline();
    const finished = of(events, 'assistant.utterance').find(
      (e) => e.data.utteranceId === cut.data.utteranceId && e.data.phase === 'finished',
    );
    expect(finished?.data.reason).not.toBe('completed');
    call.hangUp();
  }, 120_000);
});
