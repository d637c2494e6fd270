import { pcmToBase64 } from '@venus/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type RTCDataChannel,
  RTCPeerConnection,
  RTCRtpCodecParameters,
  type RTCRtpTransceiver,
  RtpHeader,
  RtpPacket,
} from 'werift';
import { createEdgeApp } from '../app.ts';
import { FakeWorkerLink } from '../testing/fake-worker-link.ts';
import { OpusCodec } from './opus-codec.ts';
import { OPUS_CODEC } from './peer-connection.ts';
import { CALLS_PATH, mountWebRtcRoutes } from './webrtc-routes.ts';

/**
 * The signalling routes and a whole call, with a werift peer as the client over real loopback UDP
 * and a FAKE worker link playing the session host. (Real Chromium against the real runtime is
 * test/webrtc-chromium.test.ts.)
 */

const tone = (ms: number) =>
  Int16Array.from({ length: ms * 24 }, (_, i) => Math.round(6000 * Math.sin((2 * Math.PI * 300 * i) / 24_000)));

const until = async (check: () => boolean, timeoutMs = 5000, what = 'condition') => {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

function edgeWithCalls(apiKeys: string[] = []) {
  const link = new FakeWorkerLink();
  const edge = createEdgeApp({ link, apiKeys });
  const calls = mountWebRtcRoutes(edge.app, edge, { iceAddress: '127.0.0.1' });
  cleanup.push(async () => calls.close());
  return { link, edge, calls };
}

async function clientOffer() {
  const pc = new RTCPeerConnection({
    codecs: { audio: [new RTCRtpCodecParameters(OPUS_CODEC)], video: [] },
    iceInterfaceAddresses: { udp4: '127.0.0.1' },
    iceAdditionalHostAddresses: ['127.0.0.1'],
    iceUseIpv6: false,
  });
  cleanup.push(() => pc.close());
  const channel = pc.createDataChannel('oai-events');
  const transceiver = pc.addTransceiver('audio', { direction: 'sendrecv' });
  await pc.setLocalDescription(await pc.createOffer());
  await until(() => pc.iceGatheringState === 'complete', 5000, 'gathering');
  return { pc, channel, transceiver, sdp: pc.localDescription!.sdp };
}

describe('WebRTC signalling routes', () => {
  it('refuses what is not an SDP offer, and unknown calls', async () => {
    const { edge } = edgeWithCalls();
    const json = await edge.app.request(CALLS_PATH, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(json.status).toBe(415);
    const garbage = await edge.app.request(CALLS_PATH, {
      method: 'POST',
      body: 'hello',
      headers: { 'content-type': 'application/sdp' },
    });
    expect(garbage.status).toBe(400);
    expect(((await garbage.json()) as { error: { code: string } }).error.code).toBe('invalid_arguments');
    const noAudio = await edge.app.request(CALLS_PATH, {
      method: 'POST',
      body: 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n',
      headers: { 'content-type': 'application/sdp' },
    });
    expect(noAudio.status).toBe(400);
    const hangup = await edge.app.request(`${CALLS_PATH}/sess_nope/hangup`, { method: 'POST' });
    expect(hangup.status).toBe(404);
  });

  it('requires the same credentials as the WebSocket', async () => {
    const { edge } = edgeWithCalls(['sk-test']);
    const { sdp } = await clientOffer();
    const response = await edge.app.request(CALLS_PATH, {
      method: 'POST',
      body: sdp,
      headers: { 'content-type': 'application/sdp' },
    });
    expect(response.status).toBe(401);
  });
});

describe('a WebRTC call', () => {
  it('relays events both ways, microphone RTP in, assistant audio out as paced RTP, flushed on barge-in', async () => {
    const { link, edge, calls } = edgeWithCalls();
    const client = await clientOffer();
    const received: RtpPacket[] = [];
    const events: { type: string; [k: string]: unknown }[] = [];
    client.transceiver.onTrack.subscribe((track) => track.onReceiveRtp.subscribe((rtp) => received.push(rtp)));
    client.channel.onMessage.subscribe((data) => events.push(JSON.parse(String(data))));

    // The older beta route, with a multipart-free SDP body, answers the same way.
    const response = await edge.app.request('/v1/realtime?model=venus', {
      method: 'POST',
      body: client.sdp,
      headers: { 'content-type': 'application/sdp' },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('content-type')).toContain('application/sdp');
    const location = response.headers.get('location')!;
    expect(location).toMatch(/^\/v1\/realtime\/calls\/sess_/);
    const sessionId = location.split('/').pop()!;
    const answer = await response.text();
    expect(answer.match(/a=candidate:.*/g)?.every((line) => line.includes(' 127.0.0.1 '))).toBe(true);
    await client.pc.setRemoteDescription({ type: 'answer', sdp: answer });
    await until(() => (client.channel as RTCDataChannel).readyState === 'open', 8000, 'data channel');
    await until(() => events.length > 0, 3000, 'session.created');
    expect(events[0]?.type).toBe('session.created');
    expect(calls.get(sessionId)?.stats.connectMs).toBeGreaterThan(0);

    // Client events on the data channel reach the worker.
    client.channel.send(
      JSON.stringify({
        type: 'conversation.item.create',
        item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hello' }] },
      }),
    );
    await until(() => link.framesOf('text').length === 1, 3000, 'text frame');

    // Microphone: 300 ms of Opus RTP becomes ~300 ms of 16 kHz audio frames.
    const codec = new OpusCodec();
    cleanup.push(async () => codec.close());
    const mic = tone(300);
    for (let i = 0; i < 15; i++) {
      const payload = Buffer.from(codec.encode(mic.subarray(i * 480, (i + 1) * 480)));
      const header = new RtpHeader({ sequenceNumber: 100 + i, timestamp: 960 * i, marker: i === 0 });
      await (client.transceiver as RTCRtpTransceiver).sender.sendRtp(new RtpPacket(header, payload));
    }
    const heardSamples = () => link.framesOf('audio').reduce((n, f) => n + f.pcm16k.byteLength / 2, 0);
    await until(() => heardSamples() >= 4000, 3000, 'microphone audio');

    // Assistant audio: deltas never reach the data channel; they come back as RTP in real time.
    link.pushTimeline(sessionId, {
      stream: 'assistant',
      type: 'assistant.utterance',
      data: { utteranceId: 'utt_1', phase: 'started' },
    });
    link.pushTimeline(sessionId, {
      stream: 'assistant',
      type: 'assistant.audio',
      data: { utteranceId: 'utt_1', audioChunkSeq: 0, pcm24k: pcmToBase64(tone(2000)), startMs: 0, durationMs: 2000 },
    });
    await until(() => received.length >= 20, 3000, 'assistant RTP');
    const sequence = received.map((p) => p.header.sequenceNumber);
    for (let i = 1; i < sequence.length; i++) expect((sequence[i]! - sequence[i - 1]!) & 0xffff).toBe(1);
    expect(received[0]!.header.marker).toBe(true);
    // Paced: nowhere near the 100 frames of the utterance have gone out yet.
    expect(received.length).toBeLessThan(60);
    // What has been sent is what the client hears: progress goes to the worker as the client's acks.
    await until(() => link.framesOf('playback_ack').some((f) => f.source === 'client'), 3000, 'playback ack');
    const firstAck = link.framesOf('playback_ack').find((f) => f.source === 'client')!;
    expect(firstAck.utteranceId).toBe('utt_1');
    expect(firstAck.playedMs).toBeGreaterThan(0);
    expect(firstAck.playedMs).toBeLessThan(1500);

    // The runtime gives the user the floor: unsent audio is dropped.
    link.pushTimeline(sessionId, {
      stream: 'assistant',
      type: 'assistant.interruption',
      data: {
        action: 'discard',
        cause: 'interruption',
        utteranceId: 'utt_1',
        heardMs: 400,
        heardText: '',
        cancelledWork: [],
      },
    });
    await until(() => events.some((e) => e.type === 'output_audio_buffer.cleared'), 3000, 'cleared');
    const afterFlush = received.length;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(received.length - afterFlush).toBeLessThanOrEqual(3); // at most what was in flight
    expect(calls.get(sessionId)?.stats.framesFlushed).toBeGreaterThan(20);
    expect(events.some((e) => e.type.endsWith('audio.delta'))).toBe(false);
    expect(events.some((e) => e.type === 'venus.timeline')).toBe(true);

    // Hanging up ends the worker session.
    const hangup = await edge.app.request(`${location}/hangup`, { method: 'POST' });
    expect(hangup.status).toBe(200);
    expect(link.framesOf('close')).toHaveLength(1);
    expect(calls.size).toBe(0);
  });
});
