import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Browser, chromium } from 'playwright-core';

/** Debian's Chromium (`apt-get install -y chromium`); CHROMIUM_PATH overrides. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface LaunchChromiumOptions {
  /** A WAV file the fake microphone plays (looped); Chromium wants 16-bit PCM. */
  fakeMicrophoneWav?: string;
}

export interface ChromiumHandle {
  browser: Browser;
  /** A scratch folder, removed by `close`. */
  dir: string;
  close(): Promise<void>;
}

/**
 * Starts real headless Chromium for end-to-end tests: fake microphone and camera with no
 * permission prompts, loopback allowed for WebRTC (host candidates on 127.0.0.1, no mDNS names),
 * autoplay allowed, and nothing that reaches the network. Playwright gives each launch a fresh
 * profile.
 *
 * @example
 *   const chrome = await launchChromium({ fakeMicrophoneWav: wavPath });
 *   const page = await chrome.browser.newPage();
 *   await chrome.close();
 */
export async function launchChromium(options: LaunchChromiumOptions = {}): Promise<ChromiumHandle> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`no Chromium at ${CHROMIUM_PATH}: install it (apt-get install -y chromium) or set CHROMIUM_PATH`);
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'venus-chromium-'));
  const args = [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--use-fake-device-for-media-stream',
    '--use-fake-ui-for-media-stream',
    '--allow-loopback-in-peer-connection',
    '--autoplay-policy=no-user-gesture-required',
    '--disable-features=WebRtcHideLocalIpsWithMdns',
  ];
  if (options.fakeMicrophoneWav !== undefined)
    args.push(`--use-file-for-fake-audio-capture=${options.fakeMicrophoneWav}`);
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args, timeout: 30_000 });
  return {
    browser,
    dir,
    async close() {
      await browser.close().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Writes mono 16-bit PCM as a WAV file. */
export function writeWav(file: string, pcm: Int16Array, sampleRateHz: number): void {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + pcm.byteLength, 4);
  header.write('WAVE', 8);
  header.write('fmt ', 12);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(sampleRateHz, 24);
  header.writeUInt32LE(sampleRateHz * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(pcm.byteLength, 40);
  writeFileSync(file, Buffer.concat([header, Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength)]));
}
