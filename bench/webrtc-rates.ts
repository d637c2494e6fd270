import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startEmbeddedRuntime } from '../embedded/embedded-runtime.ts';
import { launchChromium, writeWav } from '../test/support/chromium.ts';
import { PAGE_CLIENT, type RtpStats, waitForRtp } from '../test/support/webrtc-call-page.ts';

export interface WebRtcRatesOptions {
  /** Length of the measuring window, while the assistant speaks (seconds). */
  measureS: number;
}

export interface WebRtcRates {
  /** getUserMedia to peer connection `connected`, by the browser's clock. */
  connectMs: number;
  /** Browser -> edge RTP packets per second (real time: 50 for 20 ms Opus). */
  upPerSec: number;
  /** Edge -> browser RTP packets per second while the assistant speaks (real time: 50). */
  downPerSec: number;
  /** Inbound packets the browser counted lost over the whole call. */
  lost: number;
  /** The window actually measured, by the browser's stats clock (ms). */
  windowMs: number;
  /**
   * CPU of this process (the embedded runtime: edge, in-process worker and reference model, Opus
   * both ways) per RTP packet it received or sent in the window, µs. Chromium is not in it.
   */
  cpuPerPacketUs: number;
}

/**
 * Packet rates of a real WebRTC call: headless Chromium (fake microphone playing silence) calls the
 * embedded runtime, types a question, and counts RTP packets both ways by its own getStats clock
 * over a window of the assistant's spoken reply, and this process's CPU per packet over it. A
 * figure, not a check: on a busy machine the rates drop below real time (the tests check packets
 * against audio durations instead).
 */
export async function runWebRtcRates(options: WebRtcRatesOptions): Promise<WebRtcRates> {
  const dir = mkdtempSync(path.join(tmpdir(), 'venus-bench-webrtc-'));
  const wavPath = path.join(dir, 'silence.wav');
  writeWav(wavPath, new Int16Array(16_000 * 30), 16_000);
  const [runtime, chrome] = await Promise.all([
    startEmbeddedRuntime({ port: 0 }),
    launchChromium({ fakeMicrophoneWav: wavPath }),
  ]);
  try {
    const page = await chrome.browser.newPage();
    await page.goto(`${runtime.url}/healthz`);
    await page.addScriptTag({ content: PAGE_CLIENT });
    await page.evaluate('window.startCall()');
    const connected = await page.waitForFunction('window.call.connectedMs', undefined, { timeout: 30_000 });
    await page.waitForFunction("window.call.events.some((e) => e.type === 'session.created')", undefined, {
      timeout: 30_000,
    });
    // 200 ms chunks, as the test's call uses.
    await page.evaluate('window.sendEvent({ type: "session.update", session: { venus: { chunk_ms: 200 } } })');
    await page.waitForFunction("window.call.events.some((e) => e.type === 'session.updated')", undefined, {
      timeout: 30_000,
    });
    await page.evaluate(`window.typeText(${JSON.stringify("What's the weather in Paris?")})`);
    // The reply has started: its first packets are in.
    const before = await waitForRtp(page, 'assistant RTP', (s) => s.inbound !== null && s.inbound.packets >= 5);
    const cpuFrom = process.cpuUsage();
    await new Promise((resolve) => setTimeout(resolve, options.measureS * 1000));
    const after = (await page.evaluate('window.rtpStats()')) as RtpStats;
    const cpu = process.cpuUsage(cpuFrom);
    const count = (a: { packets: number } | null, b: { packets: number } | null) =>
      a && b ? b.packets - a.packets : 0;
    const packets = count(before.outbound, after.outbound) + count(before.inbound, after.inbound);
    const rate = (a: { packets: number; at: number } | null, b: { packets: number; at: number } | null) =>
      a && b && b.at > a.at ? ((b.packets - a.packets) * 1000) / (b.at - a.at) : 0;
    return {
      connectMs: Number(await connected.jsonValue()),
      upPerSec: rate(before.outbound, after.outbound),
      downPerSec: rate(before.inbound, after.inbound),
      lost: after.inbound?.lost ?? 0,
      windowMs: (after.inbound?.at ?? 0) - (before.inbound?.at ?? 0),
      cpuPerPacketUs: packets === 0 ? 0 : (cpu.user + cpu.system) / packets,
    };
  } finally {
    await chrome.close();
    await runtime.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
