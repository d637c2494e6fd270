import { describe, expect, it } from 'vitest';
import { ConversationItems } from './conversation-items.ts';
import type { OutboundEvent } from './outbound-event.ts';
import { UserAudioTurns } from './user-audio-turns.ts';

const transcript = (text: string, addressed = true) => ({
  text,
  confidence: 0.9,
  inGrammar: true,
  addressed,
  audio: { fromInputSeq: 1, toInputSeq: 4, durationMs: 1200 },
});

function setup(ga: boolean) {
  const events: OutboundEvent[] = [];
  const emit = (e: OutboundEvent) => events.push(e);
  const conversation = new ConversationItems({ emit, ga: () => ga });
  return { events, conversation, turns: new UserAudioTurns({ emit, conversation }) };
}

describe('UserAudioTurns', () => {
  it('commits a spoken turn as a user audio item chained to the one before, then gives it its transcript', () => {
    const { events, conversation, turns } = setup(true);
    conversation.add({ id: 'item_a', role: 'assistant', status: 'completed', content: [] });
    turns.committed('item_u');
    turns.transcript(transcript('what time is it in tokyo'), () => 'unused');
    expect(events.map((e) => e.type)).toEqual([
      'conversation.item.added',
      'input_audio_buffer.committed',
      'conversation.item.added',
      'conversation.item.done',
      'venus.user.transcript',
      'conversation.item.input_audio_transcription.delta',
      'conversation.item.input_audio_transcription.completed',
    ]);
    expect(events[1]).toMatchObject({ previous_item_id: 'item_a', item_id: 'item_u' });
    expect(events[2]).toMatchObject({
      previous_item_id: 'item_a',
      item: { id: 'item_u', role: 'user', content: [{ type: 'input_audio', transcript: null }] },
    });
    expect(events[6]).toMatchObject({ item_id: 'item_u', content_index: 0, transcript: 'what time is it in tokyo' });
    expect(conversation.get('item_u')?.content).toEqual([
      { type: 'input_audio', transcript: 'what time is it in tokyo' },
    ]);
  });

  it('beta clients also get conversation.item.created', () => {
    const { events, turns } = setup(false);
    turns.committed('item_u');
    expect(events.map((e) => e.type)).toContain('conversation.item.created');
  });

  it('speech the assistant talked through is no turn: its transcript is a venus event only, and the next turn gets its own', () => {
    const { events, turns } = setup(true);
    turns.committed('item_u');
    turns.transcript(transcript('mm-hm', false), () => 'unused');
    turns.transcript(transcript('what is the weather in berlin'), () => 'unused');
    const completed = events.filter((e) => e.type === 'conversation.item.input_audio_transcription.completed');
    expect(completed).toEqual([
      expect.objectContaining({ item_id: 'item_u', transcript: 'what is the weather in berlin' }),
    ]);
    expect(events.find((e) => e.type === 'venus.user.transcript')).toMatchObject({ item_id: null, addressed: false });
  });

  it('a turn with no announced item is committed when its transcript comes', () => {
    const { events, turns } = setup(true);
    turns.transcript(transcript('stop'), () => 'item_new');
    expect(events.map((e) => e.type)).toEqual([
      'input_audio_buffer.committed',
      'conversation.item.added',
      'conversation.item.done',
      'venus.user.transcript',
      'conversation.item.input_audio_transcription.delta',
      'conversation.item.input_audio_transcription.completed',
    ]);
    expect(events.at(-1)).toMatchObject({ item_id: 'item_new', transcript: 'stop' });
    // It waits for nothing more: the next transcript without an item makes a new one again.
    turns.transcript(transcript('wait'), () => 'item_next');
    expect(events.at(-1)).toMatchObject({ item_id: 'item_next' });
  });
});
