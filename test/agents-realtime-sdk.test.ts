import {
  OpenAIRealtimeWebSocket,
  RealtimeAgent,
  type RealtimeItem,
  RealtimeSession,
  tool,
} from '@openai/agents-realtime';
import { createBuiltinFunctions } from '@venus/harness-functions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type EmbeddedRuntime, startEmbeddedRuntime } from '../embedded/embedded-runtime.ts';
import { until } from './support/until.ts';

/**
 * `@openai/agents-realtime` (the OpenAI Agents SDK's voice layer), unmodified: a `RealtimeSession`
 * over its WebSocket transport against the embedded runtime (edge + session host + reference model +
 * in-process harness). The SDK keeps its own history from `previous_item_id` chains, takes the
 * agent's text from `response.done` content (`output_audio` transcripts), and after `interrupt()`
 * truncates and retrieves the item, and it runs its own client-side tools when a `function_call`
 * item names them: each of these is checked as the SDK itself sees it.
 */
interface RawEvent {
  type: string;
  [key: string]: unknown;
}

let runtime: EmbeddedRuntime;
let wsUrl: string;

beforeAll(async () => {
  // Slow functions keep the delegated weather lookup running until the interruption has happened.
  runtime = await startEmbeddedRuntime({
    port: 0,
    defaultConfig: { chunkMs: 160 },
    functions: createBuiltinFunctions({ latencyMs: 20_000 }),
  });
  wsUrl = `${runtime.url.replace('http', 'ws')}/v1/realtime`;
}, 60_000);
afterAll(async () => {
  await runtime?.close();
});

/** A connected SDK session and everything it reported: raw server events, errors, agent_end texts. */
async function openSession(tools: ReturnType<typeof tool>[] = []) {
  const agent = new RealtimeAgent({ name: 'venus', instructions: 'Answer briefly.', tools });
  const session = new RealtimeSession(agent, {
    transport: new OpenAIRealtimeWebSocket({ url: wsUrl }),
    model: 'venus-reference',
  });
  const raw: RawEvent[] = [];
  const errors: unknown[] = [];
  const agentEnds: string[] = [];
  session.on('transport_event', (event) => raw.push(event as RawEvent));
  session.on('error', (error) => errors.push(error));
  session.on('agent_end', (_context, _agent, text) => agentEnds.push(text));
  // The edge is open in this runtime: the SDK insists on a key, which it sends and we ignore.
  await session.connect({ apiKey: 'sk-unused-local' });
  await until('the SDK session.update was applied', () => raw.some((e) => e.type === 'session.updated'));
  const find = (type: string, match: (e: RawEvent) => boolean = () => true) =>
    raw.find((e) => e.type === type && match(e));
  return { session, raw, errors, agentEnds, find };
}

const textOf = (item: RealtimeItem): string => {
  if (item.type !== 'message') return '';
  return item.content
    .map((part) => ('text' in part ? (part.text ?? '') : 'transcript' in part ? (part.transcript ?? '') : ''))
    .join('');
};

/** The id of the first assistant message the server announced (the acknowledgement of a request). */
function firstMessageId(raw: RawEvent[]): string | undefined {
  const added = raw.find(
    (e) => e.type === 'response.output_item.added' && (e.item as { type: string }).type === 'message',
  );
  return (added?.item as { id: string } | undefined)?.id;
}

/** The id of the assistant item whose finished transcript matches, once its response is done. */
function spokenItem(raw: RawEvent[], pattern: RegExp): string | undefined {
  for (const e of raw) {
    if (e.type !== 'response.done') continue;
    const item = (e.response as { output: { id: string; content?: { transcript?: string }[] }[] }).output[0];
    if (item?.content?.some((part) => pattern.test(part.transcript ?? ''))) return item.id;
  }
  return undefined;
}

describe('@openai/agents-realtime against the edge', () => {
  it('a typed turn: history in conversation order with chained previous ids, agent_end with the reply text', async () => {
    const { session, raw, errors, agentEnds, find } = await openSession();
    try {
      session.sendMessage("What's the weather in Paris?");
      await until('agent_end', () => agentEnds.length > 0);
      await until('the assistant item in history', () =>
        session.history.some((i) => 'role' in i && i.role === 'assistant'),
      );

      expect(agentEnds[0]).toMatch(/Paris/);
      const messages = session.history.filter((item) => item.type === 'message');
      expect(messages.map((item) => item.role)).toEqual(['user', 'assistant']);
      const [user, assistant] = messages;
      expect(textOf(user!)).toBe("What's the weather in Paris?");
      expect(textOf(assistant!)).toBe(agentEnds[0]);

      // The wire as the SDK got it: GA names only, and each item names the one before it.
      expect(find('conversation.item.created')).toBeUndefined();
      const added = raw.filter((e) => e.type === 'conversation.item.added');
      expect(added.map((e) => [(e.item as { id: string }).id, e.previous_item_id])).toEqual([
        [user!.itemId, null],
        [assistant!.itemId, user!.itemId],
      ]);
      const done = find('response.done') ?? { type: 'missing', response: { output: [] } };
      const output = (done.response as { output: { content: { type: string }[] }[] }).output;
      expect(output[0]!.content.map((part) => part.type)).toEqual(['output_audio']);
      expect(errors).toEqual([]);
    } finally {
      session.close();
    }
  }, 60_000);

  it('interrupt(): the response ends cancelled, its delegated work is cancelled, no error and no invented user speech', async () => {
    const { session, raw, errors, find } = await openSession();
    try {
      session.sendMessage("What's the weather in Paris?");
      await until(
        'the delegation and the first audio of the reply',
        () => find('venus.delegation') !== undefined && find('response.output_audio.delta') !== undefined,
      );
      const workId = String(find('venus.delegation')!.work_id);
      const itemId = String(find('response.output_audio.delta')!.item_id);
      session.interrupt();

      await until(
        'the cancelled response.done',
        () => find('response.done', (e) => (e.response as { status: string }).status === 'cancelled') !== undefined,
      );
      // The SDK truncates what it played and retrieves the item to rebuild it.
      await until('the truncated item retrieved', () => find('conversation.item.retrieved') !== undefined);
      expect((find('conversation.item.retrieved')!.item as { id: string }).id).toBe(itemId);
      // The turn that asked for the lookup was cancelled, so the lookup is too.
      await until('the delegated work cancelled', () =>
        raw.some((e) => e.type === 'venus.work.state' && e.work_id === workId && e.state === 'CANCELLED'),
      );
      const interruption = find('venus.interruption');
      expect(interruption).toMatchObject({ action: 'discard', item_id: itemId, cancelled_work: [workId] });

      expect(errors).toEqual([]);
      expect(raw.filter((e) => e.type === 'error')).toEqual([]);
      expect(find('input_audio_buffer.speech_started')).toBeUndefined();
      expect(session.history.filter((item) => item.type === 'message').map((item) => item.role)).toEqual([
        'user',
        'assistant',
      ]);
    } finally {
      session.close();
    }
  }, 60_000);

  it('a client-side tool() is called as a delegation: the assistant talks on, the result is spoken after', async () => {
    let calledAt = -1;
    let answeredAt = -1;
    let talkedOn = false;
    const isAckAudio = (e: RawEvent) => e.type === 'response.output_audio.delta' && e.item_id === firstMessageId(raw);
    const lookupOrder = tool({
      name: 'lookup_order',
      description: 'Looks up where a customer order is: its shipping status and delivery date.',
      parameters: z.object({ order_id: z.string().describe('The order number') }),
      execute: async ({ order_id }) => {
        calledAt = raw.length;
        // The tool answers once the assistant has spoken on while the call was pending: a server
        // whose response waited for the tool would never let this happen.
        talkedOn = await until('acknowledgement audio while the call is pending', () =>
          raw.slice(calledAt).some(isAckAudio),
        ).then(
          () => true,
          () => false,
        );
        answeredAt = raw.length;
        return `Order ${order_id} shipped on Monday and arrives on Friday.`;
      },
    });
    const { session, raw, errors, find } = await openSession([lookupOrder]);
    try {
      session.sendMessage('Where is my order 4417?');
      await until('the tool result spoken', () => spokenItem(raw, /arrives on Friday/) !== undefined, 60_000);

      // The tool ran once, with the argument the planner read from the request per the tool's schema.
      const call = find('response.output_item.done', (e) => (e.item as { type: string }).type === 'function_call');
      expect(call?.item).toMatchObject({ name: 'lookup_order', arguments: '{"order_id":"4417"}', status: 'completed' });
      expect(calledAt).toBeGreaterThan(raw.indexOf(call!));

      // The acknowledgement's response began before the call, and its audio went on while the call
      // was pending: nothing waited for the tool.
      const ackId = firstMessageId(raw);
      const ackCreated = raw.findIndex(
        (e) => e.type === 'response.output_item.added' && (e.item as { id: string }).id === ackId,
      );
      expect(ackCreated).toBeGreaterThanOrEqual(0);
      expect(ackCreated).toBeLessThan(raw.indexOf(call!));
      expect(talkedOn).toBe(true);
      expect(raw.slice(calledAt, answeredAt).some(isAckAudio)).toBe(true);

      // The output came back as an item, and the result was spoken after it, in a response of its own.
      const output = raw.findIndex(
        (e) => e.type === 'conversation.item.added' && (e.item as { type: string }).type === 'function_call_output',
      );
      expect(output).toBeGreaterThanOrEqual(answeredAt);
      const resultId = spokenItem(raw, /arrives on Friday/);
      expect(resultId).not.toBe(ackId);
      const spoken = raw.findIndex((e) => e.type === 'response.output_audio.delta' && e.item_id === resultId);
      expect(spoken).toBeGreaterThan(output);

      // venus.* events said what was pending: the work running the client's function, then its result.
      const workId = String(find('venus.function_call')!.work_id);
      expect(find('venus.work.state', (e) => e.work_id === workId && e.state === 'RUNNING')).toMatchObject({
        function_name: 'lookup_order',
      });
      expect(find('venus.work.result', (e) => e.work_id === workId)).toMatchObject({ ok: true });
      // The SDK's own history holds the call with its output.
      const toolItem = session.history.find((item) => item.type === 'function_call');
      expect(toolItem).toMatchObject({ name: 'lookup_order', status: 'completed' });
      expect(String((toolItem as { output?: unknown }).output)).toContain('arrives on Friday');
      expect(errors).toEqual([]);
      expect(raw.filter((e) => e.type === 'error')).toEqual([]);
    } finally {
      session.close();
    }
  }, 120_000);

  it('a request no function fits gets a spoken apology, not silence', async () => {
    const { session, raw, errors } = await openSession();
    try {
      session.sendMessage('Sing me a song about the sea');
      await until('the apology spoken', () => spokenItem(raw, /^Sorry/) !== undefined, 45_000);
      expect(errors).toEqual([]);
    } finally {
      session.close();
    }
  }, 90_000);
});
