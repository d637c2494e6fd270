import { randomUUID } from 'node:crypto';
import type { TimelineEvent, TimelineStore } from '@venus/protocol';
import { TimelineEventSchema, VenusError } from '@venus/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/** Bounds a test may ask the store for; `now` is the test's clock, so retention runs without waiting. */
export interface TimelineStoreBounds {
  retentionMs?: number;
  maxEvents?: number;
  now?: () => number;
}

export interface TimelineStoreFixture {
  store: TimelineStore;
  /** Another writer over the same data with its own connection, where the store has connections. */
  openPeer?: () => TimelineStore;
  cleanup: () => Promise<void>;
}

interface Draft {
  stream: string;
  type: string;
  data: Record<string, unknown>;
}

/** Stamps drafts with session, seqs from `firstSeq`, chunk and clock, and validates them for real. */
export function stamp(session: string, firstSeq: number, drafts: readonly Draft[]): TimelineEvent[] {
  return drafts.map((draft, i) =>
    TimelineEventSchema.parse({
      ...draft,
      session,
      seq: firstSeq + i,
      chunk: Math.floor((firstSeq + i) / 4),
      atMs: (firstSeq + i) * 250,
    }),
  );
}

export function texts(session: string, firstSeq: number, count: number, tag = 'x'): TimelineEvent[] {
  const drafts = Array.from({ length: count }, (_, i) => ({
    stream: 'user',
    type: 'user.text',
    data: { inputSeq: firstSeq + i, itemId: `${tag}-${firstSeq + i}`, text: `${tag} says ${firstSeq + i}` },
  }));
  return stamp(session, firstSeq, drafts);
}

function mixedDrafts(): Draft[] {
  return [
    { stream: 'system', type: 'session.config', data: { config: { chunkMs: 160 }, tenant: 'acme' } },
    {
      stream: 'user',
      type: 'user.audio',
      data: {
        inputSeq: 0,
        audio: { segmentId: 'u:0', track: 'user', offsetMs: 0, durationMs: 40, sampleRateHz: 16_000 },
        durationMs: 40,
      },
    },
    { stream: 'user', type: 'user.text', data: { inputSeq: 1, itemId: 'i1', text: 'Grüße 👋 "quoted"\nline' } },
    { stream: 'user', type: 'user.speech', data: { state: 'started', probability: 0.93 } },
    { stream: 'assistant', type: 'assistant.control', data: { decision: 'speak' } },
    { stream: 'assistant', type: 'assistant.utterance', data: { utteranceId: 'u1', phase: 'started' } },
    {
      stream: 'assistant',
      type: 'assistant.audio',
      data: {
        utteranceId: 'u1',
        audioChunkSeq: 0,
        audio: { segmentId: 'a:0', track: 'assistant', offsetMs: 1234.5, durationMs: 20, sampleRateHz: 24_000 },
        startMs: 0,
        durationMs: 20,
      },
    },
    {
      stream: 'assistant',
      type: 'assistant.delegate',
      data: { workId: 'w1', query: 'weather in Oslo', evidenceCutoffSeq: 3, policy: 'when_idle', private: true },
    },
    {
      stream: 'assistant',
      type: 'assistant.interruption',
      data: {
        action: 'repair',
        cause: 'interruption',
        utteranceId: 'u1',
        heardMs: 1234.5,
        heardText: 'It is',
        cancelledWork: ['w0'],
      },
    },
    { stream: 'background', type: 'work.state', data: { workId: 'w1', state: 'RUNNING', functionName: 'weather' } },
    {
      stream: 'background',
      type: 'work.result',
      data: {
        result: {
          workId: 'w1',
          session: 'other',
          incarnation: 2,
          ok: true,
          text: 'Sunny, 21 degrees.',
          data: { tempC: 21, tags: ['sun', null], nested: { deep: [1, 2.5] } },
          policy: 'when_idle',
          completedAtMs: 10,
          expiresAtMs: 600_010,
        },
      },
    },
    { stream: 'system', type: 'playback.ack', data: { utteranceId: 'u1', playedMs: 980, source: 'client' } },
    { stream: 'system', type: 'session.closed', data: { reason: 'bye' } },
  ];
}

async function expectConflict(promise: Promise<unknown>, code = 'timeline_seq_conflict'): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(VenusError.isInstance(error), `expected a VenusError, got ${String(error)}`).toBe(true);
  expect((error as VenusError).code).toBe(code);
}

/**
 * The behaviour every TimelineStore must have. Each test gets a fresh store from `makeStore`
 * (for shared backends: a fresh key prefix) and cleans it up afterwards.
 */
export function timelineStoreContract(
  name: string,
  makeStore: (bounds?: TimelineStoreBounds) => Promise<TimelineStoreFixture>,
): void {
  describe(`TimelineStore contract: ${name}`, () => {
    let fixture: TimelineStoreFixture;
    let store: TimelineStore;
    let session: string;

    beforeEach(async () => {
      fixture = await makeStore();
      store = fixture.store;
      session = `s-${randomUUID()}`;
    });
    afterEach(async () => {
      await fixture.cleanup();
    });

    it('round-trips every kind of event exactly, audio references included', async () => {
      const events = stamp(session, 1, mixedDrafts());
      await store.append(events.slice(0, 1));
      await store.append(events.slice(1));
      expect(await store.read(session)).toStrictEqual(events);
      expect(await store.lastSeq(session)).toBe(events.length);
    });

    it('reads seq ranges and honours limit', async () => {
      const events = texts(session, 1, 10);
      await store.append(events);
      const seqs = async (options: Parameters<TimelineStore['read']>[1]) =>
        (await store.read(session, options)).map((e) => e.seq);
      expect(await seqs({ fromSeq: 3, toSeq: 6 })).toEqual([3, 4, 5, 6]);
      expect(await seqs({ fromSeq: 3, toSeq: 6, limit: 2 })).toEqual([3, 4]);
      expect(await seqs({ fromSeq: 8 })).toEqual([8, 9, 10]);
      expect(await seqs({ toSeq: 2 })).toEqual([1, 2]);
      expect(await seqs({ limit: 3 })).toEqual([1, 2, 3]);
      expect(await seqs({ fromSeq: 10, toSeq: 10 })).toEqual([10]);
      expect(await seqs({ fromSeq: 11 })).toEqual([]);
      expect(await seqs({ fromSeq: 6, toSeq: 5 })).toEqual([]);
      expect(await seqs({ limit: 0 })).toEqual([]);
      expect(await store.read(session, { fromSeq: 4, toSeq: 4 })).toStrictEqual([events[3]]);
      expect(await store.read(`unknown-${session}`)).toEqual([]);
    });

    it('reports lastSeq, 0 for an unknown session', async () => {
      expect(await store.lastSeq(session)).toBe(0);
      await store.append(texts(session, 1, 3));
      expect(await store.lastSeq(session)).toBe(3);
      await store.append(texts(session, 4, 1));
      expect(await store.lastSeq(session)).toBe(4);
    });

    it('rejects non-contiguous batches atomically with timeline_seq_conflict', async () => {
      await expectConflict(store.append(texts(session, 2, 2))); // wrong start on an empty log
      expect(await store.lastSeq(session)).toBe(0);
      const stored = texts(session, 1, 3);
      await store.append(stored);

      await expectConflict(store.append(texts(session, 5, 2))); // gap
      await expectConflict(store.append(texts(session, 3, 2))); // overlaps seq 3
      await expectConflict(store.append(texts(session, 1, 1))); // replays seq 1
      const holed = [...texts(session, 4, 2), ...texts(session, 7, 1)];
      await expectConflict(store.append(holed)); // right start, gap inside
      const repeated = [...texts(session, 4, 1), ...texts(session, 4, 1)];
      await expectConflict(store.append(repeated)); // right start, duplicate inside

      expect(await store.lastSeq(session)).toBe(3);
      expect(await store.read(session)).toStrictEqual(stored);
      await store.append(texts(session, 4, 1));
      expect(await store.lastSeq(session)).toBe(4);
    });

    it('starts a lost log again at the batch only where nothing of the session is stored (afterLoss)', async () => {
      // A writer that wrote seqs 1-4 finds the store empty (it restarted without persistence).
      await expectConflict(store.append(texts(session, 5, 3)));
      await store.append(texts(session, 5, 3), { afterLoss: true });
      expect((await store.read(session)).map((e) => e.seq)).toEqual([5, 6, 7]);
      expect(await store.lastSeq(session)).toBe(7);
      await store.append(texts(session, 8, 1));
      // A log that holds anything refuses it: a stale writer after a handover is still fenced.
      await expectConflict(store.append(texts(session, 20, 1), { afterLoss: true }));
      await expectConflict(store.append(texts(session, 9, 1, 'stale'), { afterLoss: true }));
      expect(await store.lastSeq(session)).toBe(8);
    });

    it('rejects a batch that mixes sessions and stores none of it', async () => {
      const other = `${session}-other`;
      await expectConflict(store.append([...texts(session, 1, 1), ...texts(other, 2, 1)]), 'wrong_session');
      expect(await store.lastSeq(session)).toBe(0);
      expect(await store.lastSeq(other)).toBe(0);
    });

    it('accepts an empty batch as a no-op', async () => {
      await store.append([]);
      expect(await store.lastSeq(session)).toBe(0);
    });

    it('keeps sessions isolated, and delete removes only its own', async () => {
      const other = `${session}-other`;
      const mine = texts(session, 1, 3, 'mine');
      const theirs = texts(other, 1, 2, 'theirs');
      await store.append(mine);
      await store.append(theirs);
      expect(await store.read(session)).toStrictEqual(mine);
      expect(await store.read(other)).toStrictEqual(theirs);

      await store.delete(session);
      expect(await store.lastSeq(session)).toBe(0);
      expect(await store.read(session)).toEqual([]);
      expect(await store.read(other)).toStrictEqual(theirs);
      // A deleted timeline starts over at seq 1.
      await store.append(texts(session, 1, 1, 'again'));
      expect(await store.lastSeq(session)).toBe(1);
    });

    it('applies appends issued back to back without awaiting, in order', async () => {
      const batches = [texts(session, 1, 2), texts(session, 3, 1), texts(session, 4, 3), texts(session, 7, 1)];
      await Promise.all(batches.map((batch) => store.append(batch)));
      expect(await store.read(session)).toStrictEqual(batches.flat());
    });

    it('tail yields the backlog from fromSeq, then live appends in order, then stops on abort', async () => {
      await store.append(texts(session, 1, 3));
      const controller = new AbortController();
      const seen: TimelineEvent[] = [];
      let caughtUp!: () => void;
      const backlogDone = new Promise<void>((resolve) => {
        caughtUp = resolve;
      });
      const consumer = (async () => {
        for await (const event of store.tail(session, { fromSeq: 2, signal: controller.signal })) {
          seen.push(event);
          if (event.seq === 3) caughtUp();
        }
      })();

      await backlogDone;
      const live = [texts(session, 4, 2), texts(session, 6, 1)];
      for (const batch of live) await store.append(batch);
      await expect.poll(() => seen.length).toBe(5);
      // Aborting while the tail waits for more must end the iteration.
      controller.abort();
      await consumer;

      expect(seen.map((e) => e.seq)).toEqual([2, 3, 4, 5, 6]);
      expect(seen.slice(2)).toStrictEqual(live.flat());
      await store.append(texts(session, 7, 1));
      expect(seen).toHaveLength(5);
    });

    it('tail on an empty session waits for the first append; an aborted signal yields nothing', async () => {
      const controller = new AbortController();
      const seen: number[] = [];
      const consumer = (async () => {
        for await (const event of store.tail(session, { signal: controller.signal })) {
          seen.push(event.seq);
          if (event.seq === 2) controller.abort();
        }
      })();
      await store.append(texts(session, 1, 1));
      await store.append(texts(session, 2, 1));
      await consumer;
      expect(seen).toEqual([1, 2]);

      const aborted = new AbortController();
      aborted.abort();
      const none: TimelineEvent[] = [];
      for await (const event of store.tail(session, { signal: aborted.signal })) none.push(event);
      expect(none).toEqual([]);
    });

    it('tail ends when the consumer breaks out, and more tails can run side by side', async () => {
      await store.append(texts(session, 1, 4));
      const controller = new AbortController();
      const first: number[] = [];
      for await (const event of store.tail(session, { signal: controller.signal })) {
        first.push(event.seq);
        if (event.seq === 2) break;
      }
      expect(first).toEqual([1, 2]);

      const tails = [1, 3].map(async (fromSeq) => {
        const got: number[] = [];
        for await (const event of store.tail(session, { fromSeq, signal: controller.signal })) {
          got.push(event.seq);
          if (event.seq === 5) break;
        }
        return got;
      });
      await store.append(texts(session, 5, 1));
      expect(await Promise.all(tails)).toEqual([
        [1, 2, 3, 4, 5],
        [3, 4, 5],
      ]);
      controller.abort();
    });

    it('close ends open tails and can be called twice', async () => {
      await store.append(texts(session, 1, 1));
      const seen: number[] = [];
      let caughtUp!: () => void;
      const backlogDone = new Promise<void>((resolve) => {
        caughtUp = resolve;
      });
      const consumer = (async () => {
        for await (const event of store.tail(session, { signal: new AbortController().signal })) {
          seen.push(event.seq);
          caughtUp();
        }
      })();
      await backlogDone;
      await store.close();
      await consumer;
      expect(seen).toEqual([1]);
      await store.close();
    });

    it('lets exactly one of two writers with the same expected seq win', async () => {
      const peer = fixture.openPeer?.() ?? store;
      await store.append(texts(session, 1, 1));
      for (let round = 0; round < 20; round++) {
        const next = (await store.lastSeq(session)) + 1;
        const a = texts(session, next, 3, `a${round}`);
        const b = texts(session, next, 2, `b${round}`);
        const results = await Promise.allSettled([store.append(a), peer.append(b)]);
        const won = results.filter((r) => r.status === 'fulfilled');
        const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
        expect(won).toHaveLength(1);
        expect(lost).toHaveLength(1);
        expect((lost[0]!.reason as VenusError).code).toBe('timeline_seq_conflict');
        const winner = results[0]!.status === 'fulfilled' ? a : b;
        expect(await store.read(session, { fromSeq: next })).toStrictEqual(winner);
      }
      const all = await peer.read(session);
      expect(all.map((e) => e.seq)).toEqual(Array.from({ length: all.length }, (_, i) => i + 1));
    });

    it('reads and tails a 1000-event session back in order', async () => {
      const events = texts(session, 1, 1000);
      for (let i = 0; i < events.length; i += 50) await store.append(events.slice(i, i + 50));
      expect(await store.lastSeq(session)).toBe(1000);
      expect(await store.read(session)).toStrictEqual(events);

      const controller = new AbortController();
      const tailed: TimelineEvent[] = [];
      for await (const event of store.tail(session, { signal: controller.signal })) {
        tailed.push(event);
        if (event.seq === 1000) controller.abort();
      }
      expect(tailed).toStrictEqual(events);
    });

    describe('retention and bounds', () => {
      const RETENTION_MS = 10 * 60_000;
      const bounded: TimelineStoreFixture[] = [];
      let clock = 0;
      /**
       * The clock starts more than the retention in the past: a store that expires by absolute time
       * (Redis PEXPIREAT) drops what the test ended "then" at once and keeps what it ended "now"
       * for minutes, so no assertion depends on how long the test takes.
       */
      const open = async (extra: TimelineStoreBounds = {}) => {
        clock = Date.now() - RETENTION_MS - 60_000;
        const f = await makeStore({ retentionMs: RETENTION_MS, now: () => clock, ...extra });
        bounded.push(f);
        return f.store;
      };
      afterEach(async () => {
        await Promise.all(bounded.splice(0).map((f) => f.cleanup()));
      });

      it('deletes an ended session after the retention, and only that session', async () => {
        const s = await open();
        const [ended, later, live] = [`${session}-ended`, `${session}-later`, `${session}-live`];
        for (const id of [ended, later, live]) await s.append(texts(id, 1, 3));
        await s.endSession(ended);
        clock += RETENTION_MS;
        await s.endSession(later);
        // `later` ended RETENTION_MS after `ended`: `ended` is past its retention, `later` within it.
        expect(await s.lastSeq(ended)).toBe(0);
        expect(await s.read(ended)).toEqual([]);
        expect((await s.read(later)).map((e) => e.seq)).toEqual([1, 2, 3]);
        expect((await s.read(live)).map((e) => e.seq)).toEqual([1, 2, 3]);
        // Ending a session the store does not hold, or one already gone, changes nothing.
        await s.endSession(`${session}-never`);
        await s.endSession(ended);
        expect(await s.lastSeq(live)).toBe(3);
      });

      it('ends a session when its session.closed event is appended', async () => {
        const s = await open();
        const [closed, open_] = [`${session}-closed`, `${session}-open`];
        for (const id of [closed, open_]) await s.append(texts(id, 1, 2));
        const bye = stamp(closed, 3, [{ stream: 'system', type: 'session.closed', data: { reason: 'bye' } }]);
        await s.append(bye);
        clock += RETENTION_MS;
        expect(await s.lastSeq(closed)).toBe(0);
        expect(await s.lastSeq(open_)).toBe(2);
      });

      it('with a retention of 0 deletes an ended session at once', async () => {
        const s = await open({ retentionMs: 0 });
        await s.append(texts(session, 1, 2));
        await s.endSession(session);
        expect(await s.lastSeq(session)).toBe(0);
      });

      it('trims a long log to its length bound, newest kept, seqs and the fence unaffected', async () => {
        const s = await open({ maxEvents: 50 });
        const events = texts(session, 1, 1000);
        for (let i = 0; i < events.length; i += 10) await s.append(events.slice(i, i + 10));
        expect(await s.lastSeq(session)).toBe(1000);
        const kept = await s.read(session);
        expect(kept.length).toBeGreaterThanOrEqual(50);
        expect(kept.length).toBeLessThan(1000);
        // A contiguous run that ends at the newest event.
        const first = kept[0]!.seq;
        expect(kept).toStrictEqual(events.slice(first - 1));
        expect(await s.read(session, { fromSeq: 1, limit: 2 })).toStrictEqual(events.slice(first - 1, first + 1));
        expect(await s.read(session, { fromSeq: 990, toSeq: 991 })).toStrictEqual(events.slice(989, 991));
        await expectConflict(s.append(texts(session, 1000, 1)));
        await s.append(texts(session, 1001, 1));
        expect(await s.lastSeq(session)).toBe(1001);

        // A tail from seq 1 goes on from the oldest event kept.
        const controller = new AbortController();
        const tailed: number[] = [];
        for await (const event of s.tail(session, { fromSeq: 1, signal: controller.signal })) {
          tailed.push(event.seq);
          if (event.seq === 1001) controller.abort();
        }
        expect(tailed[0]).toBeGreaterThanOrEqual(first);
        expect(tailed.at(-1)).toBe(1001);
        expect(tailed).toEqual(Array.from({ length: tailed.length }, (_, i) => tailed[0]! + i));
      });
    });
  });
}
