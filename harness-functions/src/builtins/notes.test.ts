import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { FunctionContext } from '../function-definition.ts';
import { createNotes, extractNotes } from './notes.ts';
import { MemoryNotesStore, type NotesStore, RedisNotesStore } from './notes-store.ts';

function context(session = 's1'): FunctionContext {
  return { signal: new AbortController().signal, progress: () => {}, session, workId: 'w1' };
}

describe('extractNotes', () => {
  it.each([
    ['take a note that the gate code is 4512', { action: 'save', text: 'the gate code is 4512' }],
    ['note down buy milk', { action: 'save', text: 'buy milk' }],
    ['remind me to call Sam in 20 minutes', { action: 'save', text: 'call Sam', remindInMinutes: 20 }],
    ['remind me to stretch in an hour', { action: 'save', text: 'stretch', remindInMinutes: 60 }],
    ['what are my notes?', { action: 'list', only: 'all' }],
    ['read my reminders', { action: 'list', only: 'reminders' }],
    ['delete note 2', { action: 'delete', which: '2' }],
    ['remove the last note', { action: 'delete', which: '-1' }],
    ['clear all my notes', { action: 'delete', which: 'all' }],
    ['delete the note about milk', { action: 'delete', which: 'milk' }],
  ])('%s', (query, expected) => {
    expect(extractNotes(query)).toEqual(expected);
  });

  it('ignores what is not about notes', () => {
    expect(extractNotes('what time is it in Tokyo')).toBeNull();
  });
});

const stores: [string, () => NotesStore][] = [['memory', () => new MemoryNotesStore()]];
if (process.env.REDIS_URL) {
  stores.push(['redis', () => new RedisNotesStore({ url: process.env.REDIS_URL, prefix: `notes:${randomUUID()}:` })]);
}

describe.each(stores)('notes on %s', (_label, open) => {
  it('saves, lists, deletes, and keeps sessions apart', async () => {
    let clock = 1_000_000;
    const notes = createNotes({ store: open(), tenant: 'acme', now: () => clock, maxNotes: 3 });
    try {
      expect((await notes.run({ action: 'save', text: 'buy milk' }, context())).speech).toBe('Noted: buy milk.');
      clock += 10;
      const reminder = await notes.run({ action: 'save', text: 'call Sam', remindInMinutes: 20 }, context());
      expect(reminder.speech).toBe("Okay, I'll remind you to call Sam in 20 minutes.");
      expect((await notes.run({ action: 'list', only: 'all' }, context())).speech).toBe(
        'You have 2 notes: 1, buy milk; 2, call Sam.',
      );
      clock += 21 * 60_000;
      expect((await notes.run({ action: 'list', only: 'reminders' }, context())).speech).toBe(
        'You have 1 reminder: 1, call Sam (due now).',
      );
      expect((await notes.run({ action: 'list', only: 'all' }, context('s2'))).speech).toBe('You have no notes.');

      await notes.run({ action: 'save', text: 'third' }, context());
      await expect(notes.run({ action: 'save', text: 'fourth' }, context())).rejects.toMatchObject({
        code: 'function_failed',
      });
      expect((await notes.run({ action: 'delete', which: '1' }, context())).speech).toBe('Deleted the note: buy milk.');
      expect((await notes.run({ action: 'delete', which: 'sam' }, context())).speech).toBe(
        'Deleted the note: call Sam.',
      );
      await expect(notes.run({ action: 'delete', which: '9' }, context())).rejects.toMatchObject({
        code: 'function_failed',
      });
      expect((await notes.run({ action: 'delete', which: 'all' }, context())).speech).toBe('Deleted all 1 notes.');
      expect((await notes.run({ action: 'list', only: 'all' }, context())).speech).toBe('You have no notes.');
    } finally {
      await notes.close();
    }
  });
});
