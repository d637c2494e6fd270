import { describe, expect, it } from 'vitest';
import { type ConversationItem, ConversationItems } from './conversation-items.ts';
import type { OutboundEvent } from './outbound-event.ts';

const userItem = (id: string): ConversationItem => ({
  id,
  role: 'user',
  status: 'completed',
  content: [{ type: 'input_text', text: id }],
});

describe('ConversationItems', () => {
  it('keeps the last `limit` items: an older one is forgotten and the chain goes on from the newest', () => {
    const events: OutboundEvent[] = [];
    const items = new ConversationItems({ emit: (e) => events.push(e), ga: () => true, limit: 2 });
    for (const id of ['a', 'b', 'c']) items.add(userItem(id));
    expect(items.has('a')).toBe(false);
    expect(items.retrieve('a')).toMatchObject({ code: 'wrong_session', param: 'item_id' });
    expect(items.retrieve('b')).toBeUndefined();
    items.add(userItem('d'));
    expect(events.filter((e) => e.type === 'conversation.item.added').map((e) => e.previous_item_id)).toEqual([
      null,
      'a',
      'b',
      'c',
    ]);
  });
});
