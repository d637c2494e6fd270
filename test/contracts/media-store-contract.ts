import { randomUUID } from 'node:crypto';
import type { MediaRef, MediaStore } from '@venus/protocol';
import { MediaRefSchema } from '@venus/protocol';
import { afterEach, describe, expect, it } from 'vitest';

/** The bounds a test asks for; `now` is the test's clock, so retention runs without waiting. */
export interface MediaStoreBounds {
  windowMs: number;
  retentionMs: number;
  now: () => number;
}

export interface MediaStoreFixture {
  store: MediaStore;
  cleanup: () => Promise<void>;
}

/** 20 ms of a track's audio at its rate, each sample its index plus `base`, so segments differ. */
export function segment(rateHz: 16_000 | 24_000, base: number, ms = 20): Int16Array {
  const pcm = new Int16Array((rateHz * ms) / 1000);
  for (let i = 0; i < pcm.length; i++) pcm[i] = (base * 7 + i) % 30_000;
  return pcm;
}

const RETENTION_MS = 10 * 60_000;

/**
 * The behaviour every MediaStore must have. Each test gets a fresh store (for shared backends a
 * fresh key prefix) with the bounds it asks for, and cleans up. The clock starts well in the
 * past (more than the retention), so a store that expires by absolute time (Redis PEXPIREAT) drops
 * what the test ended "then" at once, and keeps what it ended "now" for minutes: the assertions
 * never depend on how long the test takes.
 */
export function mediaStoreContract(name: string, makeStore: (bounds: MediaStoreBounds) => Promise<MediaStoreFixture>) {
  describe(`MediaStore contract: ${name}`, () => {
    const fixtures: MediaStoreFixture[] = [];
    let clock = 0;
    const open = async (bounds: Partial<Omit<MediaStoreBounds, 'now'>> = {}) => {
      clock = Date.now() - RETENTION_MS - 60_000;
      const fixture = await makeStore({
        windowMs: bounds.windowMs ?? 60_000,
        retentionMs: bounds.retentionMs ?? RETENTION_MS,
        now: () => clock,
      });
      fixtures.push(fixture);
      return fixture.store;
    };
    const session = () => `s-${randomUUID()}`;
    afterEach(async () => {
      await Promise.all(fixtures.splice(0).map((f) => f.cleanup()));
    });

    it('returns a valid ref at once and reads the same samples back, per track and rate', async () => {
      const store = await open();
      const s = session();
      const user = [segment(16_000, 1), segment(16_000, 2, 40)];
      const assistant = segment(24_000, 3);
      const refs = user.map((pcm) => store.put(s, 'user', pcm, 16_000));
      const spoken = store.put(s, 'assistant', assistant, 24_000);
      for (const ref of [...refs, spoken]) expect(MediaRefSchema.parse(ref)).toStrictEqual(ref);
      expect(refs.map((r) => [r.track, r.offsetMs, r.durationMs, r.sampleRateHz])).toEqual([
        ['user', 0, 20, 16_000],
        ['user', 20, 40, 16_000],
      ]);
      expect(spoken).toMatchObject({ track: 'assistant', offsetMs: 0, durationMs: 20, sampleRateHz: 24_000 });
      expect(new Set([...refs, spoken].map((r) => `${r.track}/${r.segmentId}`)).size).toBe(3);
      expect(await store.read(s, refs[0]!)).toStrictEqual(user[0]);
      expect(await store.read(s, refs[1]!)).toStrictEqual(user[1]);
      expect(await store.read(s, spoken)).toStrictEqual(assistant);
    });

    it('answers null for a ref it does not hold', async () => {
      const store = await open();
      const s = session();
      const ref = store.put(s, 'user', segment(16_000, 1), 16_000);
      expect(await store.read(`${s}-other`, ref)).toBeNull();
      expect(await store.read(s, { ...ref, segmentId: `${ref.segmentId}9` })).toBeNull();
      expect(await store.read(s, { ...ref, track: 'assistant' })).toBeNull();
      expect(await store.recent(`${s}-other`, 'user', 1000)).toEqual([]);
    });

    it('keeps its own copy of the samples', async () => {
      const store = await open();
      const s = session();
      const pcm = segment(16_000, 4);
      const kept = pcm.slice();
      const ref = store.put(s, 'user', pcm, 16_000);
      pcm.fill(0);
      expect(await store.read(s, ref)).toStrictEqual(kept);
    });

    it('keeps only the most recent window per track, and recent() returns the newest first-to-last', async () => {
      const store = await open({ windowMs: 100 });
      const s = session();
      const pcms = Array.from({ length: 10 }, (_, i) => segment(16_000, i));
      const refs = pcms.map((pcm) => store.put(s, 'user', pcm, 16_000));
      const spoken = store.put(s, 'assistant', segment(24_000, 99), 24_000);
      const held = await Promise.all(refs.map((ref) => store.read(s, ref)));
      expect(held.map((pcm) => pcm !== null)).toEqual([
        false,
        false,
        false,
        false,
        false,
        true,
        true,
        true,
        true,
        true,
      ]);
      expect(held[9]).toStrictEqual(pcms[9]);
      // Offsets count all the track's audio, evicted or not.
      expect(refs[9]!.offsetMs).toBe(180);

      const last = await store.recent(s, 'user', 60);
      expect(last.map((x) => x.ref)).toStrictEqual(refs.slice(7));
      expect(last.map((x) => x.pcm)).toStrictEqual(pcms.slice(7));
      expect((await store.recent(s, 'user', 60_000)).map((x) => x.ref)).toStrictEqual(refs.slice(5));
      // The other track has its own window.
      expect(await store.read(s, spoken)).toStrictEqual(segment(24_000, 99));
      expect((await store.recent(s, 'assistant', 60_000)).map((x) => x.ref)).toStrictEqual([spoken]);
    });

    it('applies puts issued back to back in order', async () => {
      const store = await open();
      const s = session();
      const refs: MediaRef[] = [];
      for (let i = 0; i < 200; i++) refs.push(store.put(s, 'assistant', segment(24_000, i), 24_000));
      const all = await store.recent(s, 'assistant', 60_000);
      expect(all.map((x) => x.ref)).toStrictEqual(refs);
      expect(all[123]!.pcm).toStrictEqual(segment(24_000, 123));
    });

    it('drops an ended session after its retention, and only that session', async () => {
      const store = await open();
      const [ended, later, live] = [session(), session(), session()];
      const refs = [ended, later, live].map((s) => store.put(s, 'user', segment(16_000, 5), 16_000));
      store.endSession(ended);
      clock += RETENTION_MS;
      store.endSession(later);
      // `later` ended RETENTION_MS after `ended`: `ended` is past its retention, `later` within it.
      expect(await store.read(ended, refs[0]!)).toBeNull();
      expect(await store.recent(ended, 'user', 60_000)).toEqual([]);
      expect(await store.read(later, refs[1]!)).toStrictEqual(segment(16_000, 5));
      expect(await store.read(live, refs[2]!)).toStrictEqual(segment(16_000, 5));
      // Ending a session the store never saw, or twice, changes nothing.
      store.endSession(`${live}-never`);
      store.endSession(ended);
      expect(await store.read(live, refs[2]!)).toStrictEqual(segment(16_000, 5));
    });

    it('with a retention of 0 drops an ended session at once', async () => {
      const store = await open({ retentionMs: 0 });
      const s = session();
      const ref = store.put(s, 'assistant', segment(24_000, 1), 24_000);
      store.endSession(s);
      expect(await store.read(s, ref)).toBeNull();
    });

    it('never lets an old ref read the samples of a later life of the same session id', async () => {
      const store = await open({ retentionMs: 0 });
      const s = session();
      const old = store.put(s, 'user', segment(16_000, 1), 16_000);
      store.endSession(s);
      const fresh = store.put(s, 'user', segment(16_000, 2), 16_000);
      expect(fresh.offsetMs).toBe(0);
      expect(await store.read(s, old)).toBeNull();
      expect(await store.read(s, fresh)).toStrictEqual(segment(16_000, 2));
    });

    it('close can be called after use', async () => {
      const store = await open();
      store.put(session(), 'user', segment(16_000, 1), 16_000);
      await store.close();
    });
  });
}
