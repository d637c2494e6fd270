import type { TimelineEvent } from '@venus/protocol';
import { describe, expect, it } from 'vitest';
import { MemoryTimelineStore } from './memory-timeline-store.ts';
import { parseDurationMs } from './retention.ts';

const RETENTION_MS = 60_000;

function event(session: string, seq: number, type: 'work.progress' | 'session.incarnation' | 'session.closed') {
  const base = { session, seq, chunk: 0, atMs: seq };
  if (type === 'session.closed') return { ...base, stream: 'system', type, data: { reason: 'bye' } } as TimelineEvent;
  if (type === 'session.incarnation') {
    return { ...base, stream: 'system', type, data: { incarnation: 1, reason: 'reopen' } } as TimelineEvent;
  }
  return {
    ...base,
    stream: 'background',
    type,
    data: { workId: 'w1', message: 'late', elapsedMs: 1 },
  } as TimelineEvent;
}

describe('MemoryTimelineStore retention', () => {
  it('a late event after session.closed does not keep the timeline; a reopen does', async () => {
    let now = 0;
    const store = new MemoryTimelineStore({ retentionMs: RETENTION_MS, now: () => now });
    await store.append([event('late', 1, 'work.progress'), event('late', 2, 'session.closed')]);
    await store.append([event('late', 3, 'work.progress')]);
    await store.append([event('back', 1, 'session.closed')]);
    await store.append([event('back', 2, 'session.incarnation')]);
    now += RETENTION_MS;
    expect(await store.lastSeq('late')).toBe(0);
    expect(await store.lastSeq('back')).toBe(2);
    expect(store.sessions).toBe(1);
    await store.close();
  });

  it('holds the number of ended sessions flat however many end', async () => {
    let now = 0;
    const store = new MemoryTimelineStore({ retentionMs: RETENTION_MS, now: () => now });
    for (let i = 0; i < 1000; i++) {
      await store.append([event(`s${i}`, 1, 'session.closed')]);
      now += 1000;
    }
    // One session ends a second: those of the last minute are kept, no more.
    expect(store.sessions).toBe(RETENTION_MS / 1000);
    await store.close();
  });
});

describe('parseDurationMs', () => {
  it('reads the forms an operator writes', () => {
    expect(parseDurationMs('15m', 1, 'X')).toBe(900_000);
    expect(parseDurationMs('900s', 1, 'X')).toBe(900_000);
    expect(parseDurationMs('900000', 1, 'X')).toBe(900_000);
    expect(parseDurationMs(' 250ms ', 1, 'X')).toBe(250);
    expect(parseDurationMs('1.5h', 1, 'X')).toBe(5_400_000);
    expect(parseDurationMs('0', 1, 'X')).toBe(0);
    expect(parseDurationMs(undefined, 7, 'X')).toBe(7);
    expect(parseDurationMs('', 7, 'X')).toBe(7);
  });

  it('refuses anything else, naming the setting', () => {
    for (const bad of ['15 minutes', '-5s', 'm', '1e3', '15d']) {
      expect(() => parseDurationMs(bad, 1, 'VENUS_TIMELINE_RETENTION')).toThrow(/VENUS_TIMELINE_RETENTION/);
    }
  });
});
