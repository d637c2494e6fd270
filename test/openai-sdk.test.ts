import { EdgeAuth } from '@venus/edge';
import OpenAI from 'openai';
import type { OpenAIRealtimeError } from 'openai/realtime/internal-base';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTlsRuntime, type TlsRuntime } from './fixtures/tls/tls-runtime.ts';
import { trustingFetch } from './fixtures/tls/trusting-fetch.ts';

/**
 * The official `openai` npm package, unmodified, against our edge: its REST client mints a client
 * secret, and its realtime WebSocket client (`openai/realtime/ws`) runs a session over wss with
 * that secret, against the embedded runtime (reference model, session host, in-process harness).
 * The self-signed certificate is trusted through options the SDK exposes (a `fetch` for REST, the
 * `ws` client's `ca` for the socket): no process-wide TLS settings.
 */
interface AnyEvent {
  type: string;
  [key: string]: unknown;
}

/** Everything the SDK client emits, in order, with a way to wait for the next event that matches. */
class EventLog {
  readonly events: AnyEvent[] = [];
  readonly errors: OpenAIRealtimeError[] = [];
  readonly #waiters = new Set<() => void>();

  constructor(rt: OpenAIRealtimeWS) {
    rt.on('event', (event) => {
      this.events.push(event as unknown as AnyEvent);
      for (const wake of this.#waiters) wake();
    });
    rt.on('error', (error) => this.errors.push(error));
  }

  /** The first event at or after `from` that matches; rejects after `timeoutMs`. */
  async waitFor(label: string, match: (event: AnyEvent) => boolean, from = 0, timeoutMs = 30_000): Promise<AnyEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.slice(from).find(match);
      if (found !== undefined) return found;
      const left = deadline - Date.now();
      if (left <= 0) {
        const seen = [...new Set(this.events.slice(from).map((event) => event.type))].join(', ');
        throw new Error(`no ${label} within ${timeoutMs} ms; saw: ${seen}`);
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.#waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, left);
        this.#waiters.add(wake);
      });
    }
  }
}

const ofType =
  (type: string, extra: (event: AnyEvent) => boolean = () => true) =>
  (event: AnyEvent) =>
    event.type === type && extra(event);

/** 100 ms of 24 kHz pcm16 silence. */
const SILENCE = Buffer.alloc(4800).toString('base64');

let rt: TlsRuntime;
const auth = new EdgeAuth({ secret: 'sdk-test-deployment-secret', adminKey: 'sk-admin-sdk-test' });

beforeAll(async () => {
  rt = await startTlsRuntime({ auth, defaultConfig: { chunkMs: 160 } });
});

afterAll(async () => {
  await rt?.close();
});

describe('the official openai package against the edge', () => {
  it('mints a client secret and runs a realtime session over wss: speech, delegation, result, truncate', async () => {
    expect(rt.edge.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const { key } = await auth.keys.issue({ tenant: 'acme', scopes: ['realtime'], name: 'sdk test server' });
    const server = new OpenAI({ apiKey: key, baseURL: `${rt.edge.url}/v1`, fetch: trustingFetch(rt.ca) });
    const secret = await server.realtime.clientSecrets.create({
      expires_after: { anchor: 'created_at', seconds: 120 },
      session: { type: 'realtime', instructions: 'Answer briefly.' },
    });
    expect(secret.value).toMatch(/^ek_/);
    expect(secret.expires_at).toBeGreaterThan(Date.now() / 1000);

    // The browser's side: only the client secret, as Bearer, on the SDK's own wss URL. A secret opens
    // sessions until it expires, so two run side by side: one asks and waits for the delegated result,
    // the other is interrupted and truncates what it played.
    const browser = new OpenAI({ apiKey: secret.value, baseURL: `${rt.edge.url}/v1` });
    await Promise.all([delegationScenario(browser), interruptionScenario(browser)]);
  });

  it('refuses the SDK a session with a forged client secret (401 on the upgrade)', async () => {
    const forged = `ek_${Buffer.from('{"v":1}').toString('base64url')}.${'A'.repeat(43)}`;
    const ws = new OpenAIRealtimeWS(
      { model: 'venus-reference', options: { ca: rt.ca } },
      new OpenAI({ apiKey: forged, baseURL: `${rt.edge.url}/v1` }),
    );
    const status = await new Promise<number>((resolve) => {
      ws.socket.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
      ws.on('error', () => {});
    });
    ws.socket.terminate();
    expect(status).toBe(401);
  });
});

/** Opens the SDK's realtime client, sends the GA session.update and streams silence until `run` ends. */
async function withSession(
  browser: OpenAI,
  run: (ws: OpenAIRealtimeWS, log: EventLog) => Promise<void>,
): Promise<void> {
  const ws = new OpenAIRealtimeWS({ model: 'venus-reference', options: { ca: rt.ca } }, browser);
  expect(ws.url.toString()).toBe(`${rt.edge.url.replace('https', 'wss')}/v1/realtime?model=venus-reference`);
  const log = new EventLog(ws);
  let pump: ReturnType<typeof setInterval> | undefined;
  try {
    const created = await log.waitFor('session.created', ofType('session.created'));
    pump = setInterval(() => ws.send({ type: 'input_audio_buffer.append', audio: SILENCE }), 100);
    expect(created.session).toMatchObject({ instructions: 'Answer briefly.' });
    ws.send({
      type: 'session.update',
      session: {
        type: 'realtime',
        output_modalities: ['audio'],
        audio: {
          input: { format: { type: 'audio/pcm', rate: 24000 } },
          output: { format: { type: 'audio/pcm', rate: 24000 } },
        },
      },
    });
    await log.waitFor('session.updated', ofType('session.updated'));
    await run(ws, log);
    expect(log.errors.map((error) => error.message)).toEqual([]);
  } finally {
    clearInterval(pump);
    ws.close();
  }
}

function delegationScenario(browser: OpenAI): Promise<void> {
  return withSession(browser, async (ws, log) => {
    const asked = log.events.length;
    ws.send(userText("what's the weather in Paris"));
    await log.waitFor('the user item', ofType('conversation.item.added'), asked);
    await log.waitFor('a transcript delta', ofType('response.output_audio_transcript.delta'), asked);
    await log.waitFor('an audio delta', ofType('response.output_audio.delta'), asked);
    const delegation = await log.waitFor('venus.delegation', ofType('venus.delegation'), asked);
    expect(delegation.query).toMatch(/Paris/);
    const result = await log.waitFor(
      'venus.work.result',
      ofType('venus.work.result', (event) => event.work_id === delegation.work_id),
      asked,
    );
    expect(result).toMatchObject({ ok: true, text: expect.stringMatching(/Paris/) });
  });
}

function interruptionScenario(browser: OpenAI): Promise<void> {
  return withSession(browser, async (ws, log) => {
    // A correction typed while the answer is being spoken interrupts it.
    const asked = log.events.length;
    ws.send(userText("what's the weather in Berlin"));
    const firstAudio = await log.waitFor('audio of the answer', ofType('response.output_audio.delta'), asked);
    const itemId = String(firstAudio.item_id);
    ws.send(userText('actually, make it Rome'));
    const interruption = await log.waitFor(
      'the interruption',
      ofType('venus.interruption', (event) => event.action !== 'continue'),
      asked,
    );
    expect(interruption.item_id).toBe(itemId);
    await log.waitFor('speech_started', ofType('input_audio_buffer.speech_started'), asked);

    // The client cuts its playback where the user stopped listening and says so.
    const heardMs = audioMsOf(log.events.slice(asked), itemId);
    expect(heardMs).toBeGreaterThan(0);
    const audioEndMs = Math.floor(heardMs / 2);
    const before = log.events.length;
    ws.send({ type: 'conversation.item.truncate', item_id: itemId, content_index: 0, audio_end_ms: audioEndMs });
    const truncated = await log.waitFor('conversation.item.truncated', ofType('conversation.item.truncated'), before);
    expect(truncated).toMatchObject({ item_id: itemId, content_index: 0, audio_end_ms: audioEndMs });
  });
}

function userText(text: string) {
  return {
    type: 'conversation.item.create' as const,
    item: { type: 'message' as const, role: 'user' as const, content: [{ type: 'input_text' as const, text }] },
  };
}

/** Milliseconds of 24 kHz pcm16 audio the client received for one item. */
function audioMsOf(events: AnyEvent[], itemId: string): number {
  const bytes = events
    .filter((event) => event.type === 'response.output_audio.delta' && event.item_id === itemId)
    .reduce((sum, event) => sum + Buffer.from(String(event.delta), 'base64').length, 0);
  return bytes / 2 / 24;
}
