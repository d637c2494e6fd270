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
import { FakeClock } from '../testing/fake-clock.ts';
import { FakeWorkerLink } from '../testing/fake-worker-link.ts';
import { OpusCodec } from './opus-codec.ts';
import { OPUS_CODEC } from './peer-connection.ts';
import { CALLS_PATH, mountWebRtcRoutes } from './webrtc-routes.ts';

/**
 * The signalling routes and a whole call, with a werift peer as the client over real loopback UDP
 * and a FAKE worker link playing the session host. The call's pacing (RTP sender, playout estimate)
 * runs on a FAKE clock the test steps, so what has gone out by when is exact however busy the
 * machine; the sockets keep real time, and waits for them are waits for a condition, not bounds.
 * (Real Chromium against the real runtime is test/webrtc-chromium.test.ts; the packet rate itself
 * is a figure of `npm run bench -- --only=webrtc`.)
 */

const tone = (ms: number) =>
  Int16Array.from({ length: ms * 24 }, (_, i) => Math.round(6000 * Math.sin((2 * Math.PI * 300 * i) / 24_000)));

/** Waits for a condition (generous: a busy machine is slow, not wrong). */
const until = async (check: () => boolean, timeoutMs = 30_000, what = 'condition') => {
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
  const clock = new FakeClock();
  const edge = createEdgeApp({ link, apiKeys, clock });
  const calls = mountWebRtcRoutes(edge.app, edge, { iceAddress: '127.0.0.1', clock });
  cleanup.push(async () => calls.close());
  return { link, edge, calls, clock };
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
  await until(() => pc.iceGatheringState === 'complete', 30_000, 'gathering');
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
    const { link, edge, calls, clock } = edgeWithCalls();
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
    await until(() => (client.channel as RTCDataChannel).readyState === 'open', 30_000, 'data channel');
    await until(() => events.length > 0, 30_000, 'session.created');
    expect(events[0]?.type).toBe('session.created');
    expect(calls.get(sessionId)?.stats.connectMs).toBeGreaterThan(0);

    // Client events on the data channel reach the worker.
    client.channel.send(
      JSON.stringify({
        type: 'conversation.item.create',
        item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hello' }] },
      }),
    );
    await until(() => link.framesOf('text').length === 1, 30_000, 'text frame');

    // Microphone: 15 packets (300 ms) of Opus RTP, all counted, become ~300 ms of 16 kHz audio frames.
    const codec = new OpusCodec();
    cleanup.push(async () => codec.close());
    const mic = tone(300);
    for (let i = 0; i < 15; i++) {
      const payload = Buffer.from(codec.encode(mic.subarray(i * 480, (i + 1) * 480)));
      const header = new RtpHeader({ sequenceNumber: 100 + i, timestamp: 960 * i, marker: i === 0 });
      await (client.transceiver as RTCRtpTransceiver).sender.sendRtp(new RtpPacket(header, payload));
    }
    const call = calls.get(sessionId)!;
    await until(() => call.stats.rtpPacketsIn === 15, 30_000, 'microphone RTP');
    const heardSamples = () => link.framesOf('audio').reduce((n, f) => n + f.pcm16k.byteLength / 2, 0);
    await until(() => heardSamples() >= 4000, 30_000, 'microphone audio');
    expect(heardSamples()).toBeLessThanOrEqual(15 * 320); // never more than was sent
    expect(call.stats.rtpDroppedIn).toBe(0);

    // Assistant audio: deltas never reach the data channel; they come back as RTP, paced by the clock.
    link.pushTimeline(sessionId, {
      stream: 'assistant',
      type: 'assistant.utterance',
      data: { utteranceId: 'utt_1', phase: 'started' },
    });
    link.pushAudioSamples(sessionId, { utteranceId: 'utt_1', audioChunkSeq: 0 }, tone(2000));
    link.pushTimeline(sessionId, {
      stream: 'assistant',
      type: 'assistant.audio',
      data: {
        utteranceId: 'utt_1',
        audioChunkSeq: 0,
        audio: { segmentId: 'a:0', track: 'assistant', offsetMs: 0, durationMs: 2000, sampleRateHz: 24_000 },
        startMs: 0,
        durationMs: 2000,
      },
    });
    // With the clock standing still, only the sender's 40 ms lead goes out: frames due at 0, 20, 40 ms.
    expect(call.stats.rtpPacketsOut).toBe(3);
    // 400 ms of clock: one 20 ms frame per 20 ms, still 40 ms ahead (frames due at 0..440 ms): 23 of 100.
    clock.advance(400);
    expect(call.stats.rtpPacketsOut).toBe(23);
    await until(() => received.length === 23, 30_000, 'assistant RTP');
    for (let i = 1; i < received.length; i++) {
      expect((received[i]!.header.sequenceNumber - received[i - 1]!.header.sequenceNumber) & 0xffff).toBe(1);
      // 20 ms of 48 kHz Opus per packet: the timestamp advances 960 a packet.
      expect((received[i]!.header.timestamp - received[i - 1]!.header.timestamp) >>> 0).toBe(960);
    }
    expect(received.map((p) => p.header.marker)).toEqual([true, ...Array(22).fill(false)]);
    // What has been sent is what the client hears, a playout delay (80 ms) later: the report at 250 ms
    // counts the 11 frames sent by 170 ms, and goes to the worker as the client's ack.
    await until(() => link.framesOf('playback_ack').some((f) => f.source === 'client'), 30_000, 'playback ack');
    const clientAcks = link.framesOf('playback_ack').filter((f) => f.source === 'client');
    expect(clientAcks).toEqual([expect.objectContaining({ utteranceId: 'utt_1', playedMs: 220 })]);

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
    await until(() => events.some((e) => e.type === 'output_audio_buffer.cleared'), 30_000, 'cleared');
    expect(call.stats.framesFlushed).toBe(100 - 23);
    // However long the clock runs now, nothing more goes out.
    clock.advance(3000);
    expect(call.stats.rtpPacketsOut).toBe(23);
    expect(events.some((e) => e.type.endsWith('audio.delta'))).toBe(false);
    expect(events.some((e) => e.type === 'venus.timeline')).toBe(true);

    // Hanging up ends the worker session.
    const hangup = await edge.app.request(`${location}/hangup`, { method: 'POST' });
    expect(hangup.status).toBe(200);
    expect(link.framesOf('close')).toHaveLength(1);
    expect(calls.size).toBe(0);
  });
});
