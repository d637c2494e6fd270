import { describe, expect, it } from 'vitest';
import { DELEGATION_LIMITS, DelegationRequestSchema } from './delegation.ts';

const base = {
  workId: 'w1',
  session: 's1',
  incarnation: 0,
  query: 'what is the status of my requests?',
  evidenceCutoffSeq: 3,
  chunk: 1,
  createdAtMs: 0,
};

describe('DelegationRequestSchema workSnapshot', () => {
  it('is optional', () => {
    expect(DelegationRequestSchema.parse(base).workSnapshot).toBeUndefined();
  });

  it('keeps the youngest entries, in the order given, up to the bound', () => {
    const entries = Array.from({ length: 20 }, (_, i) => ({
      workId: `w${i}`,
      query: `q${i}`,
      state: 'RUNNING' as const,
      // Entries 0..3 are the oldest: they are the ones dropped.
      ageMs: i < 4 ? 100_000 + i : 1000 + i,
    }));
    const parsed = DelegationRequestSchema.parse({ ...base, workSnapshot: entries });
    expect(parsed.workSnapshot).toHaveLength(DELEGATION_LIMITS.maxWorkSnapshotEntries);
    expect(parsed.workSnapshot?.map((e) => e.workId)).toEqual(entries.slice(4).map((e) => e.workId));
  });

  it('truncates a long query instead of refusing the delegation', () => {
    const long = 'x'.repeat(DELEGATION_LIMITS.maxQueryChars + 50);
    const parsed = DelegationRequestSchema.parse({
      ...base,
      workSnapshot: [{ workId: 'w2', query: long, state: 'QUEUED', ageMs: 5 }],
    });
    expect(parsed.workSnapshot?.[0]?.query).toHaveLength(DELEGATION_LIMITS.maxQueryChars);
  });

  it('refuses an unknown work state', () => {
    const r = DelegationRequestSchema.safeParse({
      ...base,
      workSnapshot: [{ workId: 'w2', query: 'q', state: 'SLEEPING', ageMs: 5 }],
    });
    expect(r.success).toBe(false);
  });
});
