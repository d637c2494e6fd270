import { isDeepStrictEqual } from 'node:util';
import { initializeLogger } from '@livekit/agents';
import * as livekit from '@livekit/agents-plugin-openai';
import { OpenAIRealtimeWebSocket, RealtimeAgent, RealtimeSession, tool } from '@openai/agents-realtime';
import type { SessionUpdateEvent as BetaSessionUpdate } from 'openai/resources/beta/realtime/realtime';
import type { RealtimeSessionCreateRequest } from 'openai/resources/realtime/realtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RawData, WebSocket, WebSocketServer } from 'ws';
import { z } from 'zod';
import { flatten } from '../edge/src/realtime/session-fields.ts';
import { type EmbeddedRuntime, startEmbeddedRuntime } from '../embedded/embedded-runtime.ts';
import { until } from './support/until.ts';

/**
 * Every field of the `session.update`s real SDKs send is applied (shown back in
 * `session.updated`), named in a `venus.notice`, or refused with an `error` naming it: none is
 * dropped silently. The shapes are recorded off the wire, not written here: `@openai/agents-realtime`
 * 0.20 (`RealtimeSession` over `OpenAIRealtimeWebSocket`) and LiveKit's
 * `@livekit/agents-plugin-openai` 1.9 (`RealtimeModel().session()`) talk to the real edge through a
 * recording relay. The `openai` package has no client of its own that sends one unprompted, so a
 * full GA `RealtimeSessionCreateRequest` and a full beta session are built from its types (the
 * compiler checks every field is one it knows). Each recorded update is then replayed on a fresh
 * socket against the embedded runtime (edge + worker + reference model), and its answer is read up
 * to a marker event.
 */

interface ServerEvent {
  type: string;
  [key: string]: unknown;
}

let runtime: EmbeddedRuntime;
let wsUrl: string;

beforeAll(async () => {
  runtime = await startEmbeddedRuntime({ port: 0, defaultConfig: { chunkMs: 160 } });
  wsUrl = `${runtime.url.replace('http', 'ws')}/v1/realtime`;
  initializeLogger({ pretty: false, level: process.env.LK_OPENAI_DEBUG ? 'debug' : 'warn' });
}, 60_000);
afterAll(async () => {
  await runtime?.close();
});

/** A transparent relay to the edge that keeps every event the client sent. */
async function recordingRelay(): Promise<{ url: string; sent: Record<string, unknown>[]; close(): Promise<void> }> {
  const sent: Record<string, unknown>[] = [];
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  server.on('connection', (client, request) => {
    const upstream = new WebSocket(`${wsUrl}${(request.url ?? '').replace(/^\/v1\/realtime/, '')}`);
    const early: RawData[] = [];
    client.on('message', (data) => {
      sent.push(JSON.parse(String(data)) as Record<string, unknown>);
      if (upstream.readyState === WebSocket.OPEN) upstream.send(String(data));
      else early.push(data);
    });
    upstream.on('open', () => {
      for (const data of early.splice(0)) upstream.send(String(data));
    });
    upstream.on('message', (data) => client.readyState === WebSocket.OPEN && client.send(String(data)));
    upstream.on('close', () => client.close());
    client.on('close', () => upstream.close());
  });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const { port } = server.address() as { port: number };
  return {
    url: `ws://127.0.0.1:${port}`,
    sent,
    close: () =>
      new Promise<void>((resolve) => {
        // The listener closes once its sockets have: end any the client left open.
        for (const client of server.clients) client.terminate();
        server.close(() => resolve());
      }),
  };
}

const sessionUpdates = (sent: Record<string, unknown>[]) =>
  sent.filter((e) => e.type === 'session.update').map((e) => e.session as Record<string, unknown>);

/** Sends one `session.update` on a fresh socket; its answer is every event before the marker's error. */
async function replay(session: Record<string, unknown>): Promise<ServerEvent[]> {
  const socket = new WebSocket(wsUrl);
  const events: ServerEvent[] = [];
  socket.on('message', (data) => events.push(JSON.parse(String(data)) as ServerEvent));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  try {
    await until('session.created', () => events.some((e) => e.type === 'session.created'));
    events.length = 0;
    socket.send(JSON.stringify({ type: 'session.update', event_id: 'evt_update', session }));
    // Answered in order: whatever the update earns, then the marker's own error.
    socket.send(JSON.stringify({ type: 'conversation.item.retrieve', event_id: 'evt_marker', item_id: 'no_such' }));
    const isMarker = (e: ServerEvent) =>
      e.type === 'error' && (e.error as { event_id?: string }).event_id === 'evt_marker';
    await until('the marker answered', () => events.some(isMarker));
    return events.slice(0, events.findIndex(isMarker));
  } finally {
    socket.close();
  }
}

/**
 * The fields of `session` that nothing answered: not shown back with the value sent, not named
 * (nor an ancestor of theirs) by a notice's `fields` or an error's `param`.
 */
function droppedFields(session: Record<string, unknown>, answer: ServerEvent[]): string[] {
  const updated = answer.find((e) => e.type === 'session.updated')?.session;
  const named = new Set<string>();
  for (const e of answer) {
    if (e.type === 'venus.notice')
      for (const f of (e.fields as { param: string }[] | undefined) ?? []) named.add(f.param);
    if (e.type === 'error') named.add(String((e.error as { param?: string }).param ?? ''));
  }
  const dropped: string[] = [];
  for (const leaf of flatten(session, 'session')) {
    const path = leaf.path.split('.');
    if ([...named].some((p) => leaf.path === p || leaf.path.startsWith(`${p}.`))) continue;
    const shown = path.slice(1).reduce<unknown>((at, key) => (isObject(at) ? at[key] : undefined), updated);
    if (updated !== undefined && isDeepStrictEqual(shown, leaf.value)) continue;
    dropped.push(leaf.path);
  }
  return dropped;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

async function expectNoneDropped(updates: Record<string, unknown>[]) {
  expect(updates.length).toBeGreaterThan(0);
  for (const session of updates) {
    const answer = await replay(session);
    expect({ session, dropped: droppedFields(session, answer) }).toEqual({ session, dropped: [] });
  }
}

const lookupOrder = {
  type: 'function' as const,
  name: 'lookup_order',
  description: 'Finds an order by its number',
  parameters: {
    type: 'object',
    properties: { order_id: { type: 'string', description: 'the order number' } },
    required: ['order_id'],
  },
};

describe('session.update conformance: no field silently dropped', () => {
  it('@openai/agents-realtime 0.20: the updates RealtimeSession sends, with a client tool', async () => {
    const relay = await recordingRelay();
    const lookup = tool({
      name: 'lookup_order',
      description: 'Finds an order by its number',
      parameters: z.object({ order_id: z.string() }),
      execute: async () => 'shipped',
    });
    const agent = new RealtimeAgent({ name: 'venus', instructions: 'Answer briefly.', tools: [lookup] });
    const session = new RealtimeSession(agent, {
      transport: new OpenAIRealtimeWebSocket({ url: `${relay.url}/v1/realtime` }),
      model: 'venus-reference',
    });
    try {
      await session.connect({ apiKey: 'sk-unused-local' });
      await until('the SDK sent its session with the tool', () =>
        sessionUpdates(relay.sent).some((s) => Array.isArray(s.tools) && s.tools.length > 0),
      );
    } finally {
      session.close();
      await relay.close();
    }
    await expectNoneDropped(sessionUpdates(relay.sent));
  }, 60_000);

  it("LiveKit's @livekit/agents-plugin-openai 1.9: RealtimeModel().session()", async () => {
    const relay = await recordingRelay();
    const model = new livekit.realtime.RealtimeModel({
      baseURL: `${relay.url.replace('ws', 'http')}/v1`,
      apiKey: 'sk-x',
    });
    const session = model.session();
    try {
      await until('LiveKit sent its session.update', () => sessionUpdates(relay.sent).length > 0);
    } finally {
      await session.close();
      await relay.close();
    }
    await expectNoneDropped(sessionUpdates(relay.sent));
  }, 60_000);

  it('openai: a full GA RealtimeSessionCreateRequest built from its types', async () => {
    const full = {
      type: 'realtime',
      model: 'gpt-realtime',
      instructions: 'Answer briefly.',
      output_modalities: ['audio'],
      audio: {
        input: {
          format: { type: 'audio/pcm', rate: 24000 },
          noise_reduction: { type: 'near_field' },
          transcription: { model: 'gpt-4o-mini-transcribe', language: 'en', prompt: 'orders' },
          turn_detection: {
            type: 'server_vad',
            create_response: true,
            interrupt_response: false,
            idle_timeout_ms: 5000,
            prefix_padding_ms: 300,
            silence_duration_ms: 200,
            threshold: 0.5,
          },
        },
        output: { format: { type: 'audio/pcmu' }, speed: 1.2, voice: 'en-gb' },
      },
      include: ['item.input_audio_transcription.logprobs'],
      max_output_tokens: 512,
      parallel_tool_calls: false,
      prompt: { id: 'pmpt_1', variables: { city: 'Paris' }, version: '2' },
      reasoning: { effort: 'low' },
      tool_choice: 'required',
      tools: [lookupOrder],
      tracing: { group_id: 'g1', metadata: { a: 1 }, workflow_name: 'w' },
      truncation: { type: 'retention_ratio', retention_ratio: 0.5 },
    } satisfies RealtimeSessionCreateRequest;
    await expectNoneDropped([full]);
  }, 60_000);

  it('openai: a full beta session (SessionUpdateEvent.Session) built from its types', async () => {
    const beta = {
      model: 'gpt-4o-realtime-preview',
      instructions: 'Answer briefly.',
      modalities: ['text', 'audio'],
      voice: 'alloy',
      input_audio_format: 'g711_ulaw',
      output_audio_format: 'pcm16',
      input_audio_noise_reduction: { type: 'far_field' },
      input_audio_transcription: { model: 'whisper-1', language: 'en', prompt: 'orders' },
      turn_detection: { type: 'semantic_vad', eagerness: 'high', create_response: false, interrupt_response: true },
      temperature: 0.7,
      max_response_output_tokens: 'inf',
      speed: 1,
      tool_choice: 'auto',
      tools: [lookupOrder],
      tracing: 'auto',
      client_secret: { expires_after: { anchor: 'created_at', seconds: 600 } },
    } satisfies BetaSessionUpdate.Session;
    await expectNoneDropped([beta]);
  }, 60_000);

  it('the check itself: an answer without its notices leaves fields dropped', async () => {
    const session = { type: 'realtime', temperature: 0.3, audio: { input: { transcription: { model: 'x' } } } };
    const answer = await replay(session);
    expect(droppedFields(session, answer)).toEqual([]);
    const withoutNotices = answer.filter((e) => e.type !== 'venus.notice');
    expect(droppedFields(session, withoutNotices)).toEqual([
      'session.temperature',
      'session.audio.input.transcription.model',
    ]);
  }, 60_000);
});
