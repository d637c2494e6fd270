import { type BackendResult, DELEGATION_LIMITS } from '@venus/protocol';
import { describe, expect, it } from 'vitest';
import { DelegationBook } from './delegation-book.ts';

const result = (workId: string): BackendResult => ({
  workId,
  session: 'sess_1',
  incarnation: 0,
  ok: true,
  text: `result of ${workId}`,
  policy: 'when_idle',
  completedAtMs: 0,
  expiresAtMs: 1_000_000,
});

describe('DelegationBook', () => {
  it('keeps at most 16 results waiting; landing a 17th expires the oldest', () => {
    const book = new DelegationBook('sess_1');
    const max = DELEGATION_LIMITS.maxBufferedResultsPerSession;
    expect(max).toBe(16);
    const overflowed: (string | null)[] = [];
    for (let i = 1; i <= max + 1; i++) {
      const w = book.open('u1', `q${i}`, 0, i);
      overflowed.push(book.land(result(w.workId), i, 0, i));
    }
    expect(overflowed.slice(0, max).every((x) => x === null)).toBe(true);
    expect(overflowed[max]).toBe(book.works.all()[0]?.workId);
    expect(book.waiting).toHaveLength(max);
    expect(book.waiting[0]?.result.workId).toBe(book.works.all()[1]?.workId);
  });

  it('refuses a query over the length limit and a ninth delegation in flight, with codes', () => {
    const book = new DelegationBook('sess_1');
    expect(book.refuse('x'.repeat(DELEGATION_LIMITS.maxQueryChars + 1))?.code).toBe('delegate_query_too_long');
    for (let i = 0; i < DELEGATION_LIMITS.maxInFlightPerSession; i++) book.open('u1', `q${i}`, 0, 0);
    expect(book.refuse('one more')?.code).toBe('delegate_limit_reached');
    book.works.transition(book.works.all()[0]!.workId, 'RUNNING');
    book.works.transition(book.works.all()[0]!.workId, 'FAILED');
    expect(book.refuse('one more')).toBeNull();
  });

  it('snapshots the other works with their states and ages for a status question', () => {
    const book = new DelegationBook('sess_1');
    const a = book.open('u1', 'weather in Paris', 0, 1000);
    book.works.transition(a.workId, 'RUNNING');
    const b = book.open('u2', 'how is it going', 0, 4000);
    expect(book.snapshot(b.workId, 5000)).toEqual([
      { workId: a.workId, query: 'weather in Paris', state: 'RUNNING', ageMs: 4000 },
    ]);
  });

  it('cancellable work is the open work of one utterance; the last turn is the latest utterance with any', () => {
    const book = new DelegationBook('sess_1');
    const a = book.open('u1', 'a', 0, 0);
    const b = book.open('u2', 'b', 0, 0);
    book.open('u2', 'c', 0, 0);
    book.works.transition(b.workId, 'CANCELLING');
    expect(book.cancellable('u1')).toEqual([a.workId]);
    expect(book.cancellable('u2')).toHaveLength(1);
    expect(book.lastCancellableUtterance()).toBe('u2');
    book.dropPending(a.workId);
  });
});
