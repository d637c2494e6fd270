import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedRuntime, startEmbeddedRuntime } from '../embedded/embedded-runtime.ts';
import { type ChromiumHandle, launchChromium } from './support/chromium.ts';

/**
 * The web console at `/` in real headless Chromium against the embedded runtime: connect over
 * the WebSocket, type a weather request, and watch the live timeline fill its three lanes (the
 * typed text, the assistant's utterances and delegation, the background work and its states).
 * Assertions read the page's own lane counters; the screenshot is for people.
 */

let runtime: EmbeddedRuntime;
let chrome: ChromiumHandle;
let page: Page;

beforeAll(async () => {
  [runtime, chrome] = await Promise.all([startEmbeddedRuntime({ port: 0 }), launchChromium()]);
  page = await chrome.browser.newPage({ viewport: { width: 1280, height: 1000 } });
  page.on('pageerror', (error) => console.error('page error:', error));
});

afterAll(async () => {
  await chrome?.close();
  await runtime?.close();
});

const count = (p: Page, lane: string) =>
  p
    .locator(`#count-${lane}`)
    .getAttribute('data-count')
    .then((n) => Number(n));

describe('web console in headless Chromium', () => {
  it('connects over the WebSocket, sends typed text and draws the user, assistant and background lanes live', async () => {
    await page.goto(`${runtime.url}/`);
    expect(await page.title()).toBe('Venus realtime console');
    expect(await count(page, 'user')).toBe(0);

    await page.click('#connect-ws');
    await page.waitForFunction("document.getElementById('status').textContent.includes('session sess_')", undefined, {
      timeout: 10_000,
    });
    await page.fill('#text', "What's the weather in Paris?");
    await page.press('#text', 'Enter');
    expect(await page.inputValue('#text')).toBe('');

    // Typed text (user lane), an utterance and the delegation (assistant lane), the work item
    // (background lane), and the work through to a final state.
    await page.waitForFunction(
      `(() => {
        const n = (lane) => Number(document.getElementById('count-' + lane).getAttribute('data-count'));
        return n('user') >= 1 && n('assistant') >= 2 && n('background') >= 1;
      })()`,
      undefined,
      { timeout: 20_000, polling: 200 },
    );
    await page.waitForFunction(
      "[...document.querySelectorAll('#timeline text')].some((t) => / → DELIVERED$/.test(t.textContent))",
      undefined,
      { timeout: 25_000, polling: 250 },
    );

    const counts = (await page.evaluate('window.venusConsole.counts()')) as Record<string, number>;
    expect(counts.user).toBeGreaterThanOrEqual(1);
    // The first reply, the delegation mark and the delivered result.
    expect(counts.assistant).toBeGreaterThanOrEqual(3);
    expect(counts.background).toBe(1);
    // The DOM counters say the same as the page's model.
    expect(await count(page, 'background')).toBe(counts.background);
    // Bars were drawn: at least the utterance and the work item's states.
    expect(await page.locator('#timeline rect.bar').count()).toBeGreaterThanOrEqual(3);
    await expect(page.locator('#transcript .turn.user').first().textContent()).resolves.toContain('weather in Paris');
    await page.waitForFunction("document.querySelector('#transcript .turn.assistant span')?.textContent.length > 0");

    const latency = (await page.evaluate('window.venusConsole.latency()')) as {
      client: { connectMs: number | null; typedToAudio: number[] };
      timeline: Record<string, { last: number } | null>;
    };
    expect(latency.client.connectMs).not.toBeNull();
    expect(latency.client.typedToAudio.length).toBeGreaterThanOrEqual(1);
    expect(latency.timeline.response).not.toBeNull();
    expect(latency.timeline.dispatch).not.toBeNull();
    expect(latency.timeline.admission).not.toBeNull();
    const rendered = await page.locator('#latency').textContent();
    expect(rendered).toContain('typed → first audio');

    mkdirSync('out', { recursive: true });
    await page.screenshot({ path: path.join('out', 'console.png'), fullPage: true });
    console.log(
      `console: lanes ${JSON.stringify(counts)}; connect ${Math.round(latency.client.connectMs ?? 0)} ms; ` +
        `typed -> first audio ${Math.round(latency.client.typedToAudio[0] ?? 0)} ms (browser), ` +
        `${Math.round(latency.timeline.response?.last ?? 0)} ms (session clock); ` +
        `delegation -> running ${Math.round(latency.timeline.dispatch?.last ?? 0)} ms; ` +
        `result -> admitted ${Math.round(latency.timeline.admission?.last ?? 0)} ms`,
    );
  });

  it('connects by WebRTC with the (fake) microphone and hears the assistant on the media track', async () => {
    await page.click('#disconnect');
    expect(await page.locator('#status').textContent()).toBe('disconnected');
    await page.click('#connect-webrtc');
    await page.waitForFunction(
      "document.getElementById('status').textContent.includes('(webrtc) · session sess_') && window.venusConsole.latency().client.connectMs !== null",
      undefined,
      { timeout: 15_000, polling: 100 },
    );
    expect(await count(page, 'background')).toBe(0);
    await page.fill('#text', 'What time is it in Tokyo?');
    await page.press('#text', 'Enter');
    await page.waitForFunction(
      "window.venusConsole.events.some((e) => e.type === 'output_audio_buffer.started')",
      undefined,
      { timeout: 20_000, polling: 200 },
    );
    const state = (await page.evaluate(`(() => ({
      counts: window.venusConsole.counts(),
      connectMs: window.venusConsole.latency().client.connectMs,
      playing: document.getElementById('player').srcObject !== null,
      deltas: window.venusConsole.events.filter((e) => e.type === 'response.output_audio.delta').length,
    }))()`)) as { counts: Record<string, number>; connectMs: number; playing: boolean; deltas: number };
    expect(state.playing).toBe(true);
    // Over WebRTC the voice is on the track: no audio deltas on the data channel.
    expect(state.deltas).toBe(0);
    expect(state.counts.user).toBeGreaterThanOrEqual(1);
    expect(state.counts.assistant).toBeGreaterThanOrEqual(1);
    console.log(
      `console over WebRTC: connected in ${Math.round(state.connectMs)} ms; lanes ${JSON.stringify(state.counts)}`,
    );
    await page.click('#disconnect');
  });
});
