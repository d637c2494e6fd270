import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { EspeakTts, resamplePcm16 } from '@venus/gpu-worker';
import type { TimelineEvent } from '@venus/protocol';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedRuntime, startEmbeddedRuntime } from '../embedded/embedded-runtime.ts';
import { type ChromiumHandle, launchChromium, writeWav } from './support/chromium.ts';
import { until } from './support/until.ts';
import { PAGE_CLIENT, type RtpStats, waitForRtp } from './support/webrtc-call-page.ts';

/**
 * A real browser calls the embedded runtime over WebRTC, the way OpenAI's WebRTC clients do:
 * headless Chromium's fake microphone plays synthesised speech ("What's the weather in Paris?"),
 * the page POSTs its SDP offer to /v1/realtime/calls and talks JSON events over the `oai-events`
 * data channel; the edge (werift) decodes the RTP Opus for voice activity detection and sends the
 * assistant's speech back as paced RTP Opus. Packet counts are checked against audio durations
 * (each packet carries 20 ms), never against the wall clock: the rates themselves are figures of
 * `npm run bench -- --only=webrtc`.
 */

/** Seconds of silence before the question: the call is connected by then, even on a busy machine. */
const LEAD_S = 4;

/** How long a wait for an outcome may take: generous, since a busy machine is slow, not wrong. */
const WAIT_MS = 60_000;

let runtime: EmbeddedRuntime;
let chrome: ChromiumHandle;
let page: Page;
let wavDir: string;

beforeAll(async () => {
  const tts = await EspeakTts.create();
  const speech = resamplePcm16(await tts.synthesize("What's the weather in Paris?", 'en-us'), 24_000, 16_000);
  tts.close();
  // Silence while the call connects, the question, then a long silence: the fake microphone loops the file.
  const wav = new Int16Array(16_000 * LEAD_S + speech.length + 16_000 * 14);
  wav.set(speech, 16_000 * LEAD_S);
  wavDir = mkdtempSync(path.join(tmpdir(), 'venus-webrtc-'));
  const wavPath = path.join(wavDir, 'question.wav');
  writeWav(wavPath, wav, 16_000);
  [runtime, chrome] = await Promise.all([
    startEmbeddedRuntime({ port: 0 }),
    launchChromium({ fakeMicrophoneWav: wavPath }),
  ]);
  page = await chrome.browser.newPage();
  page.on('pageerror', (error) => console.error('page error:', error));
  await page.goto(`${runtime.url}/healthz`);
  await page.addScriptTag({ content: PAGE_CLIENT });
});

afterAll(async () => {
  await chrome?.close();
  await runtime?.close();
  if (wavDir) rmSync(wavDir, { recursive: true, force: true });
});

const events = (p: Page) => p.evaluate(() => (window as unknown as { call: { events: Event[] } }).call.events);
type Event = { type: string; [key: string]: unknown };
const timeline = (list: Event[]) =>
  list.filter((e) => e.type === 'venus.timeline').map((e) => e.event as TimelineEvent);

async function waitForEvent(predicate: string, timeoutMs: number): Promise<void> {
  await page.waitForFunction(`window.call.events.some((e) => ${predicate})`, undefined, {
    timeout: timeoutMs,
    polling: 100,
  });
}

describe('WebRTC call from headless Chromium', () => {
  it('carries microphone audio in, events both ways on oai-events, and assistant speech back as RTP', async () => {
    await page.evaluate('window.startCall()');
    const call = await page.evaluate(() => {
      const c = (window as unknown as { call: { answerStatus: number; location: string | null } }).call;
      return { status: c.answerStatus, location: c.location };
    });
    expect(call.status).toBe(201);
    expect(call.location).toMatch(/^\/v1\/realtime\/calls\/sess_\w+$/);
    const sessionId = call.location!.split('/').pop()!;

    await waitForEvent("e.type === 'session.created'", WAIT_MS);
    const connectedMs = await page.waitForFunction('window.call.connectedMs', undefined, { timeout: WAIT_MS });
    await page.evaluate('window.sendEvent({ type: "session.update", session: { venus: { chunk_ms: 200 } } })');
    await waitForEvent("e.type === 'session.updated'", WAIT_MS);

    // The fake microphone's speech reaches voice activity detection through RTP and Opus decoding.
    await waitForEvent(
      "e.type === 'venus.timeline' && e.event.type === 'user.speech' && e.event.data.state === 'started'",
      WAIT_MS,
    );
    await waitForEvent(
      "e.type === 'venus.timeline' && e.event.type === 'user.speech' && e.event.data.state === 'stopped'",
      WAIT_MS,
    );
    await page.evaluate(`window.typeText(${JSON.stringify("What's the weather in Paris?")})`);

    // The assistant answers: transcript and timeline on the data channel, its voice on the RTP track.
    await waitForEvent("e.type === 'response.output_audio_transcript.delta'", WAIT_MS);
    await waitForEvent("e.type === 'output_audio_buffer.started'", WAIT_MS);
    await waitForRtp(
      page,
      'assistant RTP with energy',
      (s) => s.inbound !== null && s.inbound.packets >= 25 && s.inbound.energy > 0,
    );
    await page.waitForFunction('window.call.peak > 0.01', undefined, { timeout: WAIT_MS, polling: 100 });

    // The reply delegates the weather lookup (the span comes a few chunks into the reply).
    await waitForEvent("e.type === 'venus.timeline' && e.event.type === 'assistant.delegate'", WAIT_MS);
    await waitForEvent("e.type === 'venus.delegation'", WAIT_MS);

    const seen = await events(page);
    expect(seen[0]?.type).toBe('session.created');
    // Audio travels on the track only, never as deltas on the data channel.
    expect(seen.some((e) => e.type === 'response.output_audio.delta' || e.type === 'response.audio.delta')).toBe(false);
    const lines = timeline(seen);
    expect(lines.some((e) => e.type === 'user.text')).toBe(true);
    expect(lines.some((e) => e.type === 'assistant.utterance' && e.data.phase === 'started')).toBe(true);
    const transcript = seen
      .filter((e) => e.type === 'response.output_audio_transcript.delta')
      .map((e) => String(e.delta))
      .join('');
    expect(transcript.length).toBeGreaterThan(0);

    // The server side: the microphone arrived as user audio on the session's timeline.
    const stored = await runtime.store.read(sessionId);
    const userAudioMs = stored.reduce((ms, e) => ms + (e.type === 'user.audio' ? e.data.durationMs : 0), 0);
    expect(userAudioMs).toBeGreaterThan(2000);
    expect(stored.some((e) => e.type === 'playback.ack' && e.data.source === 'client')).toBe(true);

    // Every packet carries 20 ms of audio, so packets and milliseconds must agree both ways. Each
    // side is read before the side that causes it: what was caused can never run ahead of its cause.
    const userMs = async () =>
      (await runtime.store.read(sessionId)).reduce(
        (ms, e) => ms + (e.type === 'user.audio' ? e.data.durationMs : 0),
        0,
      );
    const rtp = async () => (await page.evaluate('window.rtpStats()')) as RtpStats;
    // Uplink: the session's user audio is at most the browser's packets × 20 ms (nothing invented) ...
    const heardSoFar = await userMs();
    const up = (await rtp()).outbound!.packets;
    expect(heardSoFar).toBeLessThanOrEqual(up * 20);
    // ... and catches up with them (nothing dropped), short of what the edge and the worker still batch.
    let caughtUp = heardSoFar;
    await until(
      'the user audio of the packets sent',
      () => caughtUp >= up * 20 - 500,
      WAIT_MS,
      async () => {
        caughtUp = await userMs();
      },
    );
    // Downlink: the browser received at most the assistant's audio on the timeline, in 20 ms packets
    // (a partial frame is padded when the next chunk of its utterance is late: at most once a chunk).
    const down = (await rtp()).inbound!;
    // The worker sends audio before its timeline write lands: read the timeline once every event
    // stamped so far is stored, or the last chunks sent may be missing from it.
    await runtime.host.session(sessionId)?.flushed();
    const spoken = (await runtime.store.read(sessionId)).filter((e) => e.type === 'assistant.audio');
    const spokenMs = spoken.reduce((ms, e) => ms + (e.type === 'assistant.audio' ? e.data.durationMs : 0), 0);
    expect(down.packets * 20).toBeLessThanOrEqual(spokenMs + 20 * spoken.length);
    console.log(
      `WebRTC: connected in ${Math.round(Number(await connectedMs.jsonValue()))} ms (getUserMedia to connected); ` +
        `browser->edge ${up} RTP packets for ${heardSoFar} ms of user audio; edge->browser ${down.packets} packets ` +
        `(${down.lost} lost) for ${spokenMs} ms of assistant audio; user audio caught up to ${caughtUp} ms; transcript "${transcript}"`,
    );

    // Hanging up ends the call.
    const hangup = await page.evaluate(`fetch('${call.location}/hangup', { method: 'POST' }).then((r) => r.status)`);
    expect(hangup).toBe(200);
    await page.waitForFunction(
      "window.call.pc.connectionState !== 'connected' || window.call.channel.readyState !== 'open'",
      undefined,
      { timeout: WAIT_MS },
    );
  }, 300_000); // a budget for the waits above on a busy machine, not a bound on the call
});
