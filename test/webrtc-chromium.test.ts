import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { EspeakTts, resamplePcm16 } from '@venus/gpu-worker';
import type { TimelineEvent } from '@venus/protocol';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedRuntime, startEmbeddedRuntime } from '../embedded/embedded-runtime.ts';
import { type ChromiumHandle, launchChromium, writeWav } from './support/chromium.ts';

/**
 * A real browser calls the embedded runtime over WebRTC, the way OpenAI's WebRTC clients do:
 * headless Chromium's fake microphone plays synthesised speech ("What's the weather in Paris?"),
 * the page POSTs its SDP offer to /v1/realtime/calls and talks JSON events over the `oai-events`
 * data channel; the edge (werift) decodes the RTP Opus for voice activity detection and sends the
 * assistant's speech back as paced RTP Opus.
 */

/** Browser side: one call, its events and its inbound audio, kept on `window.call`. */
const PAGE_CLIENT = `
window.call = { events: [], started: 0, connectedMs: null, answerStatus: 0, location: null, peak: 0 };
window.startCall = async () => {
  const call = window.call;
  call.started = performance.now();
  const pc = new RTCPeerConnection();
  call.pc = pc;
  const channel = pc.createDataChannel('oai-events');
  call.channel = channel;
  channel.onmessage = (e) => call.events.push(JSON.parse(e.data));
  const mic = await navigator.mediaDevices.getUserMedia({ audio: true });
  pc.addTrack(mic.getAudioTracks()[0], mic);
  pc.onconnectionstatechange = () => {
    if (pc.connectionState === 'connected' && call.connectedMs === null) call.connectedMs = performance.now() - call.started;
  };
  pc.ontrack = (e) => {
    const stream = e.streams[0] || new MediaStream([e.track]);
    const audio = new Audio();
    audio.srcObject = stream;
    audio.play().catch(() => {});
    const ctx = new AudioContext();
    ctx.resume().catch(() => {});
    const analyser = ctx.createAnalyser();
    ctx.createMediaStreamSource(stream).connect(analyser);
    const samples = new Float32Array(analyser.fftSize);
    setInterval(() => {
      analyser.getFloatTimeDomainData(samples);
      for (const s of samples) call.peak = Math.max(call.peak, Math.abs(s));
    }, 50);
  };
  await pc.setLocalDescription(await pc.createOffer());
  await new Promise((resolve) => {
    if (pc.iceGatheringState === 'complete') return resolve();
    pc.onicegatheringstatechange = () => pc.iceGatheringState === 'complete' && resolve();
    setTimeout(resolve, 3000);
  });
  const response = await fetch('/v1/realtime/calls', {
    method: 'POST',
    headers: { 'Content-Type': 'application/sdp' },
    body: pc.localDescription.sdp,
  });
  call.answerStatus = response.status;
  call.location = response.headers.get('Location');
  await pc.setRemoteDescription({ type: 'answer', sdp: await response.text() });
};
window.sendEvent = (event) => window.call.channel.send(JSON.stringify(event));
window.rtpStats = async () => {
  const out = { inbound: null, outbound: null };
  for (const report of (await window.call.pc.getStats()).values()) {
    if (report.type === 'inbound-rtp' && report.kind === 'audio') out.inbound = { packets: report.packetsReceived, lost: report.packetsLost, energy: report.totalAudioEnergy || 0, at: report.timestamp };
    if (report.type === 'outbound-rtp' && report.kind === 'audio') out.outbound = { packets: report.packetsSent, at: report.timestamp };
  }
  return out;
};
`;

interface RtpStats {
  inbound: { packets: number; lost: number; energy: number; at: number } | null;
  outbound: { packets: number; at: number } | null;
}

/** Seconds of silence before the question: the call is connected by then, even on a busy machine. */
const LEAD_S = 4;

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

    await waitForEvent("e.type === 'session.created'", 10_000);
    const connectedMs = await page.waitForFunction('window.call.connectedMs', undefined, { timeout: 10_000 });
    await page.evaluate('window.sendEvent({ type: "session.update", session: { venus: { chunk_ms: 200 } } })');
    await waitForEvent("e.type === 'session.updated'", 5_000);

    // The fake microphone's speech reaches voice activity detection through RTP and Opus decoding.
    await waitForEvent(
      "e.type === 'venus.timeline' && e.event.type === 'user.speech' && e.event.data.state === 'started'",
      20_000,
    );
    await waitForEvent(
      "e.type === 'venus.timeline' && e.event.type === 'user.speech' && e.event.data.state === 'stopped'",
      10_000,
    );
    await page.evaluate(
      `window.sendEvent(${JSON.stringify({
        type: 'conversation.item.create',
        item: {
          type: 'message',
          role: 'user',
          content: [{ type: 'input_text', text: "What's the weather in Paris?" }],
        },
      })})`,
    );

    // The assistant answers: transcript and timeline on the data channel, its voice on the RTP track.
    await waitForEvent("e.type === 'response.output_audio_transcript.delta'", 15_000);
    await waitForEvent("e.type === 'output_audio_buffer.started'", 10_000);
    await page.waitForFunction(
      'window.rtpStats().then((s) => s.inbound && s.inbound.packets >= 25 && s.inbound.energy > 0)',
      undefined,
      { timeout: 15_000, polling: 200 },
    );
    await page.waitForFunction('window.call.peak > 0.01', undefined, { timeout: 5_000, polling: 100 });

    // The reply delegates the weather lookup (the span comes a few chunks into the reply).
    await waitForEvent("e.type === 'venus.timeline' && e.event.type === 'assistant.delegate'", 15_000);
    await waitForEvent("e.type === 'venus.delegation'", 1_000);

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

    // Packet rates over a second of the assistant's reply, by the browser's own stats clock.
    const before = (await page.evaluate('window.rtpStats()')) as RtpStats;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const after = (await page.evaluate('window.rtpStats()')) as RtpStats;
    const rate = (a: { packets: number; at: number } | null, b: { packets: number; at: number } | null) =>
      a && b && b.at > a.at ? ((b.packets - a.packets) * 1000) / (b.at - a.at) : 0;
    const upRate = rate(before.outbound, after.outbound);
    const downRate = rate(before.inbound, after.inbound);
    console.log(
      `WebRTC: connected in ${Math.round(Number(await connectedMs.jsonValue()))} ms (getUserMedia to connected); ` +
        `browser->edge ${upRate.toFixed(1)} RTP packets/s; edge->browser ${downRate.toFixed(1)} packets/s, ` +
        `${after.inbound?.packets} received, ${after.inbound?.lost} lost; transcript "${transcript}"`,
    );
    expect(upRate).toBeGreaterThan(20);

    // Hanging up ends the call.
    const hangup = await page.evaluate(`fetch('${call.location}/hangup', { method: 'POST' }).then((r) => r.status)`);
    expect(hangup).toBe(200);
    await page.waitForFunction(
      "window.call.pc.connectionState !== 'connected' || window.call.channel.readyState !== 'open'",
      undefined,
      { timeout: 10_000 },
    );
  });
});
