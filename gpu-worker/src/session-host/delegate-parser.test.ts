import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type DelegateParseEvent, DelegateParser } from './delegate-parser.ts';

function run(pieces: readonly string[]): { visible: string; events: DelegateParseEvent[] } {
  const parser = new DelegateParser();
  const events = [...pieces.flatMap((p) => parser.push(p)), ...parser.endTurn()];
  const visible = events.map((e) => (e.kind === 'text' ? e.text : '')).join('');
  return { visible, events: events.filter((e) => e.kind !== 'text') };
}

/** Splits `text` at the given cut points (any positions, including inside tags). */
function chunk(text: string, cuts: readonly number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let last = 0;
  for (const p of points) {
    out.push(text.slice(last, p));
    last = p;
  }
  out.push(text.slice(last));
  return out;
}

const TAG_FRAGMENTS = ['<', '<d', '<del', '<delegat', '</', '</dele', '</delegate', '>', '/', 'delegate'];
// Visible text may contain stray '<', '/', '>' and words like "delegate", but never a whole tag.
const visibleText = fc
  .array(fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom(...TAG_FRAGMENTS, ' ', 'a < b', '<b>')), {
    maxLength: 12,
  })
  .map((parts) => parts.join(''))
  .filter((s) => !/<\/?delegate>/i.test(s) && !/<\/?delegat?e?$|<\/?$|<\/?d[elgat]*$/i.test(s));

describe('DelegateParser', () => {
  it('hides a span split across pieces and reports its query', () => {
    const { visible, events } = run(['Let me check. <dele', 'gate>weather in ', 'Paris</deleg', 'ate> One moment.']);
    expect(visible).toBe('Let me check.  One moment.');
    expect(events).toEqual([{ kind: 'open' }, { kind: 'close', query: 'weather in Paris' }]);
  });

  it('reports empty, unterminated, second and stray spans as errors and keeps their content hidden', () => {
    expect(run(['a<delegate> </delegate>b']).events).toEqual([{ kind: 'open' }, { kind: 'error', reason: 'empty' }]);
    expect(run(['a<delegate>secret']).events).toEqual([{ kind: 'open' }, { kind: 'error', reason: 'unterminated' }]);
    expect(run(['a<delegate>secret']).visible).toBe('a');
    const two = run(['<delegate>x</delegate> and <delegate>y</delegate>!']);
    expect(two.events).toEqual([
      { kind: 'open' },
      { kind: 'close', query: 'x' },
      { kind: 'error', reason: 'second_span' },
    ]);
    expect(two.visible).toBe(' and !');
    expect(run(['oops</delegate>']).events).toEqual([{ kind: 'error', reason: 'stray_close' }]);
  });

  it('drops a dangling tag fragment at the end of a turn instead of showing it', () => {
    expect(run(['Hello <deleg']).visible).toBe('Hello ');
  });

  it('property: any chunking of any stream yields the same visible text, with no tag fragment and no span content', () => {
    fc.assert(
      fc.property(
        visibleText,
        fc.option(fc.string({ minLength: 1, maxLength: 30 }).filter((q) => !q.includes('<') && q.trim() !== '')),
        visibleText,
        fc.array(fc.nat(), { maxLength: 20 }),
        (before, query, after, cuts) => {
          const span = query === null ? '' : `<delegate>${query}</delegate>`;
          const stream = before + span + after;
          const whole = run([stream]);
          const pieces = run(chunk(stream, cuts));
          expect(pieces.visible).toBe(whole.visible);
          expect(pieces.events).toEqual(whole.events);
          expect(pieces.visible).toBe(before + after);
          expect(pieces.visible).not.toMatch(/<\/?delegate>/i);
          if (query !== null) {
            expect(pieces.events).toContainEqual({ kind: 'close', query: query.trim() });
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});
