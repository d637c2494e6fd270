import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type EdgeToWorkerFrame, pcmToBase64, type TimelineDraft, type WorkerToEdgeFrame } from '@venus/protocol';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type RelayFrameHost, type RelayServer, serveRelay } from '../gpu-worker/src/relay/index.ts';

/**
 * The Cloudflare Workers edge in real workerd (Miniflare): the bundled `edge/src/adapters/workers.ts`
 * with its RealtimeSession Durable Object, relaying over a real outbound WebSocket to a relay server
 * in this process. The compatibility date and flags are the ones wrangler.toml deploys with.
 */

const RELAY_TOKEN = 'relay-token-for-tests';
const WAIT_MS = 30_000;
const API_KEY = 'sk-workers-test';

/**
 * FAKE worker behind the relay: answers each typed message with one short spoken turn (utterance
 * started, a text delta, one audio chunk, utterance finished), stamped as a session host would.
 */
class TurnFakeHost implements RelayFrameHost {
  readonly frames: EdgeToWorkerFrame[] = [];
  readonly #listeners = new Set<(frame: WorkerToEdgeFrame) => void>();
  readonly #seqs = new Map<string, number>();

  handleFrame(frame: unknown): void {
    const f = frame as EdgeToWorkerFrame;
    this.frames.push(f);
    if (f.kind !== 'text') return;
    const utteranceId = `utt_${this.frames.length}`;
    const audio = { segmentId: 'a:0', track: 'assistant', offsetMs: 0, durationMs: 20, sampleRateHz: 24_000 } as const;
    const turn: TimelineDraft[] = [
      { stream: 'assistant', type: 'assistant.utterance', data: { utteranceId, phase: 'started' } },
      { stream: 'assistant', type: 'assistant.text', data: { utteranceId, delta: `You said: ${f.text}` } },
      {
        stream: 'assistant',
        type: 'assistant.audio',
        data: { utteranceId, audioChunkSeq: 0, audio, startMs: 0, durationMs: 20 },
      },
      {
        stream: 'assistant',
        type: 'assistant.utterance',
        data: { utteranceId, phase: 'finished', reason: 'completed' },
      },
    ];
    for (const draft of turn) {
      // As a session host does: the samples frame right before its audio event.
      if (draft.type === 'assistant.audio') {
        const pcm24k = new Uint8Array(new Int16Array(480).fill(500).buffer);
        for (const listener of this.#listeners) {
          listener({ kind: 'assistant_audio', session: f.session, utteranceId, audioChunkSeq: 0, pcm24k });
        }
      }
      this.#emitTimeline(f.session, draft);
    }
  }

  onFrame(listener: (frame: WorkerToEdgeFrame) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  of(session: string): EdgeToWorkerFrame[] {
    return this.frames.filter((f) => f.session === session);
  }

  #emitTimeline(session: string, draft: TimelineDraft): void {
    const seq = (this.#seqs.get(session) ?? 0) + 1;
    this.#seqs.set(session, seq);
    const event = { ...draft, session, seq, chunk: 0, atMs: seq * 20 } as Extract<
      WorkerToEdgeFrame,
      { kind: 'timeline' }
    >['event'];
    for (const listener of this.#listeners) listener({ kind: 'timeline', session, event });
  }
}

interface Received {
  type: string;
  [key: string]: unknown;
}

/** A `ws` client that keeps what it receives, so a test can wait for the next event of a type. */
class Client {
  readonly socket: WebSocket;
  readonly received: Received[] = [];

  constructor(url: string, options?: WebSocket.ClientOptions, protocols?: string[]) {
    this.socket = new WebSocket(url, protocols, options);
    this.socket.on('message', (data) => this.received.push(JSON.parse(String(data)) as Received));
  }

  /** Waits for the event (30 s budget on a loaded machine), not for a time. */
  async next(type: string): Promise<Received> {
    const deadline = Date.now() + WAIT_MS;
    while (Date.now() <= deadline) {
      const index = this.received.findIndex((event) => event.type === type);
      if (index >= 0) return this.received.splice(index, 1)[0]!;
      await sleep(10);
    }
    throw new Error(`no ${type}; got ${this.received.map((e) => e.type).join(', ')}`);
  }

  send(event: object | string): void {
    this.socket.send(typeof event === 'string' ? event : JSON.stringify(event));
  }
}

/** The compatibility settings wrangler.toml deploys with, so the test runs what ships. */
function wranglerCompatibility(): { compatibilityDate: string; compatibilityFlags: string[] } {
  const toml = readFileSync(path.resolve('wrangler.toml'), 'utf8');
  const date = toml.match(/^compatibility_date\s*=\s*"([^"]+)"/m)?.[1];
  const flags = toml.match(/^compatibility_flags\s*=\s*\[([^\]]*)\]/m)?.[1];
  if (!date) throw new Error('wrangler.toml has no compatibility_date');
  return { compatibilityDate: date, compatibilityFlags: [...(flags ?? '').matchAll(/"([^"]+)"/g)].map((m) => m[1]!) };
}

let dir: string;
let relay: RelayServer;
let host: TurnFakeHost;
let mf: Miniflare;
let base: URL;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'venus-workers-'));
  const scriptPath = path.join(dir, 'worker.js');
  await build({
    entryPoints: [path.resolve('edge/src/adapters/workers.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    external: ['node:*'],
    outfile: scriptPath,
    logLevel: 'warning',
  });
  host = new TurnFakeHost();
  // A fast heartbeat: the Durable Object's outbound socket must answer pings to stay connected. Not
  // faster: a relay event loop stalled past one period on a loaded machine reads a late pong as missed.
  relay = await serveRelay({ host, port: 0, token: RELAY_TOKEN, heartbeatMs: 250 });
  mf = new Miniflare({
    modules: true,
    scriptPath,
    modulesRoot: dir,
    ...wranglerCompatibility(),
    durableObjects: { REALTIME_SESSION: 'RealtimeSession' },
    bindings: { VENUS_WORKERS: relay.url, VENUS_RELAY_TOKEN: RELAY_TOKEN, VENUS_API_KEYS: API_KEY },
    cf: false,
    host: '127.0.0.1',
    port: 0,
  });
  base = await mf.ready;
});

afterAll(async () => {
  await mf?.dispose();
  await relay?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const realtimeUrl = () => `${base.href.replace(/^http/, 'ws').replace(/\/$/, '')}/v1/realtime`;
const auth = { headers: { authorization: `Bearer ${API_KEY}` } };

/** Waits for an outcome (30 s budget on a loaded machine), not for a time. */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (Date.now() <= deadline) {
    if (check()) return;
    await sleep(10);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('Workers edge in workerd', () => {
  it('serves the HTTP routes of the core and guards the realtime route', async () => {
    expect((await fetch(new URL('/healthz', base))).status).toBe(200);
    expect((await fetch(new URL('/v1/realtime', base))).status).toBe(401);
    expect((await fetch(new URL('/v1/realtime', base), auth)).status).toBe(426);
  });

  it('runs a realtime session in a Durable Object relaying to the GPU worker', async () => {
    const client = new Client(realtimeUrl(), auth);
    const created = await client.next('session.created');
    const sessionId = (created.session as { id: string }).id;
    expect(sessionId).toMatch(/^sess_[0-9a-f]{24}$/);
    await until(() => host.of(sessionId).length > 0, 'the open frame at the worker');
    expect(host.of(sessionId)[0]).toMatchObject({ kind: 'open', tenant: 'default', config: { voice: 'en-us' } });

    client.send('{"type":');
    expect((await client.next('error')).error).toMatchObject({ code: 'invalid_json' });

    const say = (text: string) =>
      client.send({
        type: 'conversation.item.create',
        item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] },
      });
    say('hello from workerd');
    await client.next('conversation.item.created');
    expect((await client.next('response.output_item.added')).item).toMatchObject({ role: 'assistant' });
    expect((await client.next('response.output_audio_transcript.delta')).delta).toBe('You said: hello from workerd');
    // The samples crossed the relay as a binary assistant_audio frame and reach the client as pcm16.
    const samples = pcmToBase64(new Int16Array(480).fill(500));
    expect((await client.next('response.output_audio.delta')).delta).toBe(samples);
    expect((await client.next('response.done')).response).toMatchObject({ status: 'completed' });

    // Three heartbeats later, each answered, the Durable Object's relay socket is still the same one:
    // a socket that missed a ping is cut at the next heartbeat, so pongs could only reach the count
    // again from a reconnected socket, and accepted would have grown.
    const { accepted, pongs } = relay.stats();
    await until(() => relay.stats().pongs >= pongs + 3, 'three answered heartbeats');
    expect(relay.stats().accepted).toBe(accepted);
    say('still there?');
    expect((await client.next('response.output_audio_transcript.delta')).delta).toBe('You said: still there?');
    expect(host.of(sessionId).filter((f) => f.kind === 'open')).toHaveLength(1);

    client.socket.close(1000, 'bye');
    await until(() => host.of(sessionId).some((f) => f.kind === 'close'), 'the close frame at the worker');
    await until(() => relay.sessionCount === 0, 'the session to end');
  });

  it('applies session.update and answers with the browser subprotocol, never the key one', async () => {
    const client = new Client(realtimeUrl(), undefined, ['realtime', `openai-insecure-api-key.${API_KEY}`]);
    await client.next('session.created');
    expect(client.socket.protocol).toBe('realtime');
    client.send({ type: 'session.update', session: { voice: 'en-gb', venus: { chunk_ms: 160 } } });
    const updated = await client.next('session.updated');
    expect(updated.session).toMatchObject({ voice: 'en-gb', venus: { chunk_ms: 160 } });
    const sessionId = (updated.session as { id: string }).id;
    await until(() => host.of(sessionId).some((f) => f.kind === 'config'), 'the config frame');
    expect(host.of(sessionId).find((f) => f.kind === 'config')).toMatchObject({
      config: { voice: 'en-gb', chunkMs: 160 },
    });
    client.socket.close();
  });
});
