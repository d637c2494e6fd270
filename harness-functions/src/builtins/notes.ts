import { randomUUID } from 'node:crypto';
import { VenusError } from '@venus/protocol';
import { z } from 'zod';
import type { VenusFunction } from '../function-definition.ts';
import { MemoryNotesStore, type Note, type NotesStore, RedisNotesStore } from './notes-store.ts';

export const NotesArgsSchema = z.discriminatedUnion('action', [
  z.object({
    action: z.literal('save'),
    text: z.string().trim().min(1).max(500),
    /** Makes the note a reminder due this many minutes from now. */
    remindInMinutes: z.number().int().positive().max(525_600).optional(),
  }),
  z.object({ action: z.literal('list'), only: z.enum(['all', 'notes', 'reminders']).default('all') }),
  /** `which`: a 1-based position in the list, `all`, or words the note contains. */
  z.object({ action: z.literal('delete'), which: z.string().trim().min(1).max(200) }),
]);
export type NotesArgs = z.infer<typeof NotesArgsSchema>;

export interface NotesOptions {
  /** Default: Redis when `redisUrl` is given, memory otherwise. */
  store?: NotesStore;
  redisUrl?: string;
  /** Whose notes: each session's own (default), or one list per tenant shared by its sessions. */
  scope?: 'session' | 'tenant';
  /** The tenant the notes belong to (FunctionContext carries no tenant); default `default`. */
  tenant?: string;
  maxNotes?: number;
  now?: () => number;
}

const NUMBER_WORDS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  fifteen: 15,
  twenty: 20,
  thirty: 30,
  'forty five': 45,
  sixty: 60,
  first: 1,
  second: 2,
  third: 3,
  fourth: 4,
  fifth: 5,
  last: -1,
};
const UNIT_MINUTES: Record<string, number> = { minute: 1, min: 1, hour: 60, day: 1440, week: 10080 };

/**
 * Notes and reminders by voice: "take a note that the gate code is 4512", "remind me to call Sam in
 * 20 minutes", "what are my notes", "delete note 2". Kept per session (or per tenant) in Redis or
 * memory. Reminders are stored with their due time and listed as due; speaking them up unprompted
 * when due is the session host's job and is not done here.
 *
 * @example
 *   const notes = createNotes({ redisUrl: process.env.REDIS_URL });
 *   await notes.run({ action: 'save', text: 'buy milk' }, ctx); // speech: "Noted: buy milk."
 */
export function createNotes(options: NotesOptions = {}): VenusFunction<NotesArgs> & { close(): Promise<void> } {
  const store =
    options.store ?? (options.redisUrl ? new RedisNotesStore({ url: options.redisUrl }) : new MemoryNotesStore());
  const tenant = options.tenant ?? 'default';
  const maxNotes = options.maxNotes ?? 100;
  const now = options.now ?? Date.now;
  const scopeOf = (session: string) => (options.scope === 'tenant' ? tenant : `${tenant}:${session}`);
  return {
    name: 'notes',
    description: 'Saves, lists and deletes notes and reminders for the user.',
    parameters: NotesArgsSchema,
    examples: [
      'take a note that the gate code is 4512',
      'remind me to call Sam in 20 minutes',
      'what are my notes',
      'read my reminders',
      'delete note 2',
      'clear all my notes',
    ],
    keywords: ['note', 'notes', 'reminder', 'reminders', 'remind', 'remember', 'jot', 'write', 'memo', 'todo'],
    extract: (query) => extractNotes(query),
    async run(args, ctx) {
      const scope = scopeOf(ctx.session);
      if (args.action === 'save') {
        const createdAtMs = now();
        const note: Note = { id: randomUUID(), text: args.text, createdAtMs };
        if (args.remindInMinutes !== undefined) note.remindAtMs = createdAtMs + args.remindInMinutes * 60_000;
        if (!(await store.add(scope, note, maxNotes))) {
          throw new VenusError('function_failed', `you already have ${maxNotes} notes; delete some first`);
        }
        const speech =
          note.remindAtMs === undefined
            ? `Noted: ${args.text}.`
            : `Okay, I'll remind you to ${args.text} in ${describeMinutes(args.remindInMinutes!)}.`;
        return { data: { saved: note }, speech };
      }
      const notes = await store.list(scope);
      if (args.action === 'list') {
        const shown = notes.filter((n) =>
          args.only === 'all'
            ? true
            : args.only === 'reminders'
              ? n.remindAtMs !== undefined
              : n.remindAtMs === undefined,
        );
        const due = shown.filter((n) => n.remindAtMs !== undefined && n.remindAtMs <= now());
        const noun = args.only === 'reminders' ? 'reminder' : 'note';
        if (shown.length === 0) return { data: { notes: [] }, speech: `You have no ${noun}s.` };
        const items = shown.map(
          (n, i) => `${i + 1}, ${n.text}${n.remindAtMs !== undefined && n.remindAtMs <= now() ? ' (due now)' : ''}`,
        );
        return {
          data: { notes: shown, due },
          speech: `You have ${shown.length} ${noun}${shown.length === 1 ? '' : 's'}: ${items.join('; ')}.`,
        };
      }
      if (/^all$/i.test(args.which)) {
        const count = await store.clear(scope);
        return {
          data: { deleted: count },
          speech: count === 0 ? 'There were no notes to delete.' : `Deleted all ${count} notes.`,
        };
      }
      const position = Number(args.which);
      const target = Number.isInteger(position)
        ? notes.at(position === -1 ? -1 : position - 1)
        : notes.find((n) => n.text.toLowerCase().includes(args.which.toLowerCase()));
      if (target === undefined || (Number.isInteger(position) && position === 0)) {
        throw new VenusError('function_failed', `I couldn't find note ${args.which}`);
      }
      await store.delete(scope, target.id);
      return { data: { deleted: target }, speech: `Deleted the note: ${target.text}.` };
    },
    close: () => store.close(),
  };
}

/** Plain-language notes requests; null when the query is not one. */
export function extractNotes(query: string): NotesArgs | null {
  const q = query.trim().replace(/[.!?]+$/, '');
  const lower = q.toLowerCase();
  const reminder = q.match(
    /\bremind me (?:to |that |about )?(.+?)(?:\s+in\s+(\d+|[a-z]+(?: [a-z]+)?)\s+(minute|min|hour|day|week)s?)?$/i,
  );
  if (reminder) {
    const text = reminder[1]!.trim();
    const amount = reminder[2] === undefined ? undefined : parseAmount(reminder[2]);
    const unit = reminder[3]?.toLowerCase();
    const minutes = amount !== undefined && unit !== undefined ? amount * UNIT_MINUTES[unit]! : undefined;
    return minutes === undefined || minutes <= 0
      ? { action: 'save', text, ...(/\btomorrow\b/i.test(text) ? { remindInMinutes: 1440 } : {}) }
      : { action: 'save', text, remindInMinutes: minutes };
  }
  const save =
    q.match(
      /\b(?:take|make|save|add|write|jot)(?: down)?(?: a| this)? (?:note|memo)(?: that| to| saying| about|:)?\s+(.+)$/i,
    ) ?? q.match(/\bnote (?:that|down)\s+(.+)$/i);
  if (save) return { action: 'save', text: save[1]!.trim() };
  if (
    /\b(?:delete|remove|clear|erase|forget|cross off)\b/.test(lower) &&
    /\b(?:notes?|reminders?|memos?)\b/.test(lower)
  ) {
    if (/\b(?:all|every|everything)\b/.test(lower) || /\bclear (?:my |the )?(?:notes|reminders)\b/.test(lower)) {
      return { action: 'delete', which: 'all' };
    }
    const numbered =
      lower.match(/\b(?:notes?|reminders?|number|#)\s*(\d+)\b/) ?? lower.match(/\b(\d+)(?:st|nd|rd|th)?\b/);
    if (numbered) return { action: 'delete', which: numbered[1]! };
    const ordinal = lower.match(/\b(first|second|third|fourth|fifth|last)\b/);
    if (ordinal) return { action: 'delete', which: String(NUMBER_WORDS[ordinal[1]!]) };
    const about = q.match(/\b(?:about|saying|with)\s+(.+)$/i);
    return about ? { action: 'delete', which: about[1]!.trim() } : null;
  }
  if (/\b(?:list|show|read|tell|what|any|check)\b/.test(lower) && /\b(?:notes?|reminders?|memos?)\b/.test(lower)) {
    const only = /\breminders?\b/.test(lower) && !/\bnotes?\b/.test(lower) ? 'reminders' : 'all';
    return { action: 'list', only };
  }
  return null;
}

function parseAmount(text: string): number | undefined {
  const n = Number(text);
  return Number.isFinite(n) ? n : NUMBER_WORDS[text.toLowerCase()];
}

function describeMinutes(minutes: number): string {
  if (minutes % 1440 === 0) return minutes === 1440 ? 'a day' : `${minutes / 1440} days`;
  if (minutes % 60 === 0) return minutes === 60 ? 'an hour' : `${minutes / 60} hours`;
  return minutes === 1 ? 'a minute' : `${minutes} minutes`;
}
