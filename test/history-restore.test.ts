import { OpenAIRealtimeWebSocket, RealtimeAgent, type RealtimeItem, RealtimeSession } from '@openai/agents-realtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedRuntime, startEmbeddedRuntime } from '../embedded/embedded-runtime.ts';
import { until } from './support/until.ts';

/**
 * History restore with `@openai/agents-realtime`, unmodified: `session.updateHistory(...)` sends
 * the items as `conversation.item.create` (user and assistant with their status, a system
 * message), the edge echoes them in their place, and the reference model takes them into its
 * context without answering them. A typed follow-up then gets an answer that only the restored
 * items explain.
 */
interface RawEvent {
  type: string;
  [key: string]: unknown;
}

let runtime: EmbeddedRuntime;
let wsUrl: string;

beforeAll(async () => {
  runtime = await startEmbeddedRuntime({ port: 0, defaultConfig: { chunkMs: 160 } });
  wsUrl = `${runtime.url.replace('http', 'ws')}/v1/realtime`;
}, 60_000);
afterAll(async () => {
  await runtime?.close();
});

async function openSession() {
  const agent = new RealtimeAgent({ name: 'venus', instructions: 'Answer briefly.' });
  const session = new RealtimeSession(agent, {
    transport: new OpenAIRealtimeWebSocket({ url: wsUrl }),
    model: 'venus-reference',
  });
  const raw: RawEvent[] = [];
  const errors: Array<{ error?: unknown }> = [];
  const agentEnds: string[] = [];
  session.on('transport_event', (event) => raw.push(event as RawEvent));
  session.on('error', (error) => errors.push(error as { error?: unknown }));
  session.on('agent_end', (_context, _agent, text) => agentEnds.push(text));
  await session.connect({ apiKey: 'sk-unused-local' });
  await until('the SDK session.update was applied', () => raw.some((e) => e.type === 'session.updated'));
  return { session, raw, errors, agentEnds };
}

const user = (itemId: string, text: string): RealtimeItem => ({
  itemId,
  type: 'message',
  role: 'user',
  status: 'completed',
  content: [{ type: 'input_text', text }],
});
const assistant = (itemId: string, text: string): RealtimeItem => ({
  itemId,
  type: 'message',
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text }],
});
const system = (itemId: string, text: string): RealtimeItem => ({
  itemId,
  type: 'message',
  role: 'system',
  content: [{ type: 'input_text', text }],
});

const ids = (items: RealtimeItem[]) => items.map((item) => item.itemId);

describe('history restore with @openai/agents-realtime', () => {
  it('restores user, assistant and system items; a typed follow-up is answered from them', async () => {
    const { session, raw, errors, agentEnds } = await openSession();
    try {
      session.updateHistory([
        user('item_r1', 'What time is it?'),
        assistant('item_r2', 'Which city would you like the time in?'),
        system('item_r3', 'Keep answers short.'),
      ]);
      await until('the restored items in history', () => session.history.length === 3);
      expect(ids(session.history)).toEqual(['item_r1', 'item_r2', 'item_r3']);
      const added = raw.filter((e) => e.type === 'conversation.item.added');
      expect(added.map((e) => [(e.item as { id: string }).id, e.previous_item_id])).toEqual([
        ['item_r1', null],
        ['item_r2', 'item_r1'],
        ['item_r3', 'item_r2'],
      ]);
      // Restored items are context: nothing is said for them.
      expect(raw.filter((e) => e.type === 'response.created')).toEqual([]);

      // "Tokyo" alone is only something to look into; after the restored question it is the answer.
      session.sendMessage('Tokyo');
      await until('agent_end', () => agentEnds.length > 0);
      expect(agentEnds[0]).toMatch(/^Let me check the time in Tokyo\./);
      await until('the reply in history', () => session.history.length === 5);
      const roles = session.history.map((item) => (item.type === 'message' ? item.role : item.type));
      expect(roles).toEqual(['user', 'assistant', 'system', 'user', 'assistant']);
      // The worker recorded the restored items on the session's timeline, in order.
      const restored = raw
        .filter((e) => e.type === 'venus.timeline' && (e.event as { type: string }).type === 'conversation.restored')
        .map((e) => (e.event as { data: { itemId: string; role: string } }).data);
      expect(restored.map((d) => [d.itemId, d.role])).toEqual([
        ['item_r1', 'user'],
        ['item_r2', 'assistant'],
        ['item_r3', 'system'],
      ]);
      expect(errors).toEqual([]);
    } finally {
      session.close();
    }
  }, 90_000);

  it('says again a restored assistant turn, and refuses an insert before the end with a coded error', async () => {
    const { session, errors, agentEnds } = await openSession();
    try {
      session.updateHistory([
        user('item_o1', 'Where is my order 4417?'),
        assistant('item_o2', 'Your order 4417 shipped on Monday.'),
      ]);
      await until('the restored items in history', () => session.history.length === 2);
      session.sendMessage('Sorry, what did you just tell me?');
      await until('agent_end', () => agentEnds.length > 0);
      expect(agentEnds[0]).toBe('I said: Your order 4417 shipped on Monday.');

      // The SDK places an item inserted before the end after the item it follows: refused, not misordered.
      session.updateHistory((history) => [history[0]!, user('item_o3', 'an insert'), ...history.slice(1)]);
      await until('the refusal', () => errors.length > 0);
      expect(errors[0]?.error).toMatchObject({
        error: { type: 'invalid_request_error', code: 'unsupported_feature', param: 'previous_item_id' },
      });
      expect(ids(session.history)).not.toContain('item_o3');
    } finally {
      session.close();
    }
  }, 90_000);
});
