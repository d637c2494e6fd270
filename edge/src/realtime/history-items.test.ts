import { type ClientEvent, ClientEventSchema, EdgeToWorkerFrameSchema } from '@venus/protocol';
import { describe, expect, it } from 'vitest';
import { ConversationItems } from './conversation-items.ts';
import { FunctionCalls } from './function-calls.ts';
import { CreatedItems } from './history-items.ts';
import { RecentIds } from './item-checks.ts';
import type { OutboundEvent } from './outbound-event.ts';

type CreateEvent = Extract<ClientEvent, { type: 'conversation.item.create' }>;

function setup(ga = true) {
  const events: OutboundEvent[] = [];
  const frames: unknown[] = [];
  const emit = (event: OutboundEvent) => events.push(event);
  const conversation = new ConversationItems({ emit, ga: () => ga });
  const functionCalls = new FunctionCalls({ emit, conversation, sendOutput: (frame) => frames.push(frame) });
  const items = new CreatedItems({
    sessionId: 's1',
    emit,
    conversation,
    functionCalls,
    userItems: new RecentIds(16),
    isAssistantItem: (id) => id === 'utt_1',
    // Every frame the edge sends must pass the worker's own validation.
    send: (frame) => frames.push(EdgeToWorkerFrameSchema.parse(frame)),
  });
  /** A client event as the parser would hand it over (the real schema, defaults applied). */
  const create = (body: Record<string, unknown>) =>
    items.create(ClientEventSchema.parse({ type: 'conversation.item.create', ...body }) as CreateEvent);
  return { events, frames, create, functionCalls };
}

const message = (id: string, role: string, content: unknown[], extra: Record<string, unknown> = {}) => ({
  item: { id, type: 'message', role, content, ...extra },
});

describe('CreatedItems', () => {
  it('restores user, assistant and system messages as history, echoed in chain order', () => {
    const { events, frames, create } = setup();
    const status = { status: 'completed' };
    expect(
      create(message('i1', 'user', [{ type: 'input_text', text: 'What is the weather?' }], status)),
    ).toBeUndefined();
    const said = [{ type: 'output_text', text: 'Which city would you like the weather for?' }];
    expect(create(message('i2', 'assistant', said, status))).toBeUndefined();
    expect(create(message('i3', 'system', [{ type: 'input_text', text: 'Answer briefly.' }]))).toBeUndefined();
    expect(frames).toEqual([
      { kind: 'history', session: 's1', itemId: 'i1', role: 'user', text: 'What is the weather?' },
      { kind: 'history', session: 's1', itemId: 'i2', role: 'assistant', text: said[0]!.text },
      { kind: 'history', session: 's1', itemId: 'i3', role: 'system', text: 'Answer briefly.' },
    ]);
    const added = events.filter((e) => e.type === 'conversation.item.added');
    expect(added.map((e) => [e.previous_item_id, (e.item as { id: string }).id])).toEqual([
      [null, 'i1'],
      ['i1', 'i2'],
      ['i2', 'i3'],
    ]);
    expect(events.filter((e) => e.type === 'conversation.item.created')).toEqual([]);
    expect(added[1]!.item).toMatchObject({ role: 'assistant', status: 'completed', content: said });
    expect(events.filter((e) => e.type === 'conversation.item.done')).toHaveLength(3);
  });

  it('sends a user message without a status as a turn the model answers', () => {
    const { frames, create } = setup();
    create({ item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Paris' }] } });
    expect(frames).toEqual([{ kind: 'text', session: 's1', itemId: expect.any(String), text: 'Paris' }]);
  });

  it('reads audio items by their transcript, saying the audio itself is not heard', () => {
    const { events, frames, create } = setup(false);
    const spoken = [{ type: 'audio', audio: 'AAAA', transcript: 'It is sunny in Rome.' }];
    expect(create(message('a1', 'assistant', spoken))).toBeUndefined();
    expect(
      create(message('u1', 'user', [{ type: 'input_audio', transcript: 'thanks' }], { status: 'completed' })),
    ).toBe(undefined);
    expect(frames).toEqual([
      { kind: 'history', session: 's1', itemId: 'a1', role: 'assistant', text: 'It is sunny in Rome.' },
      { kind: 'history', session: 's1', itemId: 'u1', role: 'user', text: 'thanks' },
    ]);
    expect(events.find((e) => e.type === 'venus.notice')).toMatchObject({ code: 'item_audio_not_heard' });
    // A beta client gets `created` too, and its own content names.
    const created = events.find((e) => e.type === 'conversation.item.created');
    expect(created?.item).toMatchObject({ content: [{ type: 'audio', transcript: 'It is sunny in Rome.' }] });
  });

  it('restores a function call once its output completes it, as one backend entry', () => {
    const { frames, events, create } = setup();
    const call = {
      type: 'function_call',
      id: 'fc1',
      call_id: 'call_7',
      name: 'lookup_order',
      arguments: '{"id":"4417"}',
    };
    expect(create({ item: call })).toBeUndefined();
    expect(frames).toEqual([]);
    expect(create({ item: { type: 'function_call_output', id: 'fo1', call_id: 'call_7', output: 'shipped' } })).toBe(
      undefined,
    );
    expect(frames).toEqual([
      {
        kind: 'history',
        session: 's1',
        itemId: 'fo1',
        role: 'backend',
        text: 'The function lookup_order was called with {"id":"4417"} and returned: shipped',
      },
    ]);
    const added = events.filter((e) => e.type === 'conversation.item.added').map((e) => e.item);
    expect(added).toMatchObject([
      { type: 'function_call', call_id: 'call_7', name: 'lookup_order', status: 'completed' },
      { type: 'function_call_output', call_id: 'call_7', output: 'shipped' },
    ]);
    // The pair is complete: a second output for it is one for an unknown call.
    const again = create({ item: { type: 'function_call_output', call_id: 'call_7', output: 'again' } });
    expect(again).toMatchObject({ code: 'invalid_event', param: 'item.call_id' });
  });

  it('places items only at the end: root before any item, the last item, or nothing', () => {
    const { create, frames } = setup();
    const text = (t: string) => [{ type: 'input_text', text: t }];
    expect(create({ previous_item_id: 'root', ...message('s1', 'system', text('Be brief.')) })).toBeUndefined();
    expect(create({ previous_item_id: 'root', ...message('s2', 'system', text('x')) })).toMatchObject({
      code: 'unsupported_feature',
      param: 'previous_item_id',
    });
    expect(create({ previous_item_id: 's1', ...message('s3', 'system', text('Use French.')) })).toBeUndefined();
    expect(create({ previous_item_id: 's1', ...message('s4', 'system', text('x')) })).toMatchObject({
      code: 'unsupported_feature',
      param: 'previous_item_id',
    });
    expect(frames).toHaveLength(2);
  });

  it('refuses what it cannot take, naming the field, and sends nothing', () => {
    const { create, frames, events } = setup();
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [message('x1', 'assistant', [{ type: 'input_text', text: 'hi' }]), 'invalid_event', 'item.content.0.type'],
      [message('x2', 'system', [{ type: 'output_text', text: 'hi' }]), 'invalid_event', 'item.content.0.type'],
      [
        message('x3', 'assistant', [{ type: 'output_audio', audio: 'AAAA' }]),
        'unsupported_feature',
        'item.content.0.transcript',
      ],
      [message('x4', 'assistant', [{ type: 'output_text', text: '  ' }]), 'invalid_event', 'item.content'],
      [message('utt_1', 'assistant', [{ type: 'output_text', text: 'a' }]), 'invalid_event', 'item.id'],
      [{ item: { type: 'function_call_output', call_id: 'nope', output: 'x' } }, 'invalid_event', 'item.call_id'],
    ];
    for (const [body, code, param] of cases) expect(create(body)).toMatchObject({ code, param });
    expect(frames).toEqual([]);
    expect(events).toEqual([]);
  });
});
