import { describe, expect, it } from 'vitest';
import { ConversationItems } from './conversation-items.ts';
import { FunctionCalls } from './function-calls.ts';
import type { OutboundEvent } from './outbound-event.ts';

function setup() {
  const events: OutboundEvent[] = [];
  const sent: unknown[] = [];
  const emit = (event: OutboundEvent) => events.push(event);
  const conversation = new ConversationItems({ emit, ga: () => true });
  const calls = new FunctionCalls({ emit, conversation, sendOutput: (frame) => sent.push(frame) });
  return { events, sent, calls, conversation };
}

const call = { workId: 'work_1', callId: 'call_work_1', name: 'lookup_order', arguments: '{"order_id":"4417"}' };

describe('FunctionCalls', () => {
  it('shows a client call as a response with one function_call item, in the OpenAI order', () => {
    const { events, calls } = setup();
    calls.call(call);
    calls.call(call); // a replayed timeline event asks nothing twice
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.output_item.added',
      'conversation.item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'conversation.item.done',
      'response.done',
      'venus.function_call',
    ]);
    expect(events[5]).toMatchObject({
      item: {
        type: 'function_call',
        status: 'completed',
        name: 'lookup_order',
        call_id: 'call_work_1',
        arguments: call.arguments,
      },
    });
    expect(events[8]).toMatchObject({ work_id: 'work_1', call_id: 'call_work_1' });
  });

  it('passes the output on once, as an item after the call; unknown and repeated outputs are refused', () => {
    const { events, sent, calls, conversation } = setup();
    calls.call(call);
    const output = { type: 'function_call_output', call_id: 'call_work_1', output: 'It shipped.' };
    expect(calls.output(output, 'item_out', 'evt_1')).toBeUndefined();
    expect(sent).toEqual([{ callId: 'call_work_1', output: 'It shipped.', eventId: 'evt_1' }]);
    expect(conversation.item('item_out')).toMatchObject({ type: 'function_call_output', callId: 'call_work_1' });
    expect(events.at(-1)).toMatchObject({ type: 'conversation.item.done', item: { type: 'function_call_output' } });
    expect(calls.output(output, 'item_2', undefined)).toMatchObject({ code: 'invalid_event', param: 'item.call_id' });
    expect(calls.output({ ...output, call_id: 'call_other' }, 'item_3', undefined)).toMatchObject({
      code: 'invalid_event',
      message: 'no function call call_other in this session',
    });
    expect(sent).toHaveLength(1);
  });
});
