import type { Page } from 'playwright-core';
import { until } from './until.ts';

/**
 * Browser side of a WebRTC call to the runtime, the way OpenAI's WebRTC clients make one: a script to
 * add to a page, keeping the call, its events and its inbound audio on `window.call`;
 * `window.startCall()`, `window.sendEvent(event)`, `window.typeText(text)` (a typed user message), `window.rtpStats()` (packet counts from getStats).
 * Used by test/webrtc-chromium.test.ts and the bench's webrtc section.
 */
export const PAGE_CLIENT = `
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
window.typeText = (text) => window.sendEvent({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } });
window.rtpStats = async () => {
  const out = { inbound: null, outbound: null };
  for (const report of (await window.call.pc.getStats()).values()) {
    if (report.type === 'inbound-rtp' && report.kind === 'audio') out.inbound = { packets: report.packetsReceived, lost: report.packetsLost, energy: report.totalAudioEnergy || 0, at: report.timestamp };
    if (report.type === 'outbound-rtp' && report.kind === 'audio') out.outbound = { packets: report.packetsSent, at: report.timestamp };
  }
  return out;
};
`;

export interface RtpStats {
  inbound: { packets: number; lost: number; energy: number; at: number } | null;
  outbound: { packets: number; at: number } | null;
}

/**
 * Waits until the page's RTP stats satisfy `check`, polling from Node. (Not `page.waitForFunction`:
 * a predicate returning getStats' promise is truthy at once, so it would not wait at all.)
 */
export async function waitForRtp(
  page: Page,
  what: string,
  check: (stats: RtpStats) => boolean,
  timeoutMs = 30_000,
): Promise<RtpStats> {
  let stats: RtpStats = { inbound: null, outbound: null };
  await until(
    what,
    () => check(stats),
    timeoutMs,
    async () => {
      stats = (await page.evaluate('window.rtpStats()')) as RtpStats;
    },
  );
  return stats;
}
