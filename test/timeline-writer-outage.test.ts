import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MAX_REWRITTEN_EVENTS, RedisTimelineStore, TimelineWriter, watchConnection } from '@venus/gpu-worker';
import type { TimelineEvent, WorkerToEdgeFrame } from '@venus/protocol';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, startRedis } from './support/redis.ts';
import { until } from './support/until.ts';

/**
 * Regression (issue 15, "Redis restart loses live sessions"): during a Redis outage a failed
 * timeline write dropped its batch, the next batch no longer continued the stored log, and the
 * session fenced itself ("another writer owns this timeline") and ended. Now the writer holds what
 * it could not write and retries in order; against a real redis-server that is killed and started
 * again (AOF on), every event arrives once, contiguous, and the writer is never fenced.
 */
describe('timeline writer across a real Redis restart', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  /** A writer of session `s1` on a redis-server of its own, which the test kills and starts again. */
  async function writerOnRealRedis(persistence: boolean) {
    const port = await freePort();
    const dir = mkdtempSync(path.join(tmpdir(), 'venus-outage-'));
    let redis: ChildProcess = await startRedis(port, dir, { persistence });
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    cleanups.push(() => {
      redis.kill('SIGKILL');
    });
    // Commands fail fast while Redis is down, so the writer (not the client's offline queue) holds
    // the events: the path on which a failed write used to be dropped.
    const client = new Redis(`redis://127.0.0.1:${port}`, { maxRetriesPerRequest: 1 });
    watchConnection(client, 'outage-test');
    await client.ping();
    const store = new RedisTimelineStore({ client, prefix: 'outage:' });
    cleanups.push(() => client.disconnect());
    const frames: WorkerToEdgeFrame[] = [];
    const fenced: string[] = [];
    const writer = new TimelineWriter({
      sessionId: 's1',
      store,
      emit: (f) => frames.push(f),
      startSeq: 0,
      nowMs: () => 0,
      currentChunk: () => 0,
      onFenced: (m) => fenced.push(m),
      retryDelay: () => new Promise((r) => setTimeout(r, 50)),
    });
    const text = (i: number) =>
      writer.append({ stream: 'assistant', type: 'assistant.text', data: { utteranceId: 'u', delta: `d${i}` } });
    const kill = () => redis.kill('SIGKILL');
    const restart = async () => {
      redis = await startRedis(port, dir, { persistence });
    };
    return { writer, store, frames, fenced, text, kill, restart };
  }

  it('keeps every accepted event and its order through the outage', async () => {
    const { writer, store, frames, fenced, text, restart, kill } = await writerOnRealRedis(true);
    for (let i = 0; i < 5; i++) text(i);
    await writer.flushed();

    kill();
    // Events keep coming while Redis is down, as they would in a live session.
    let during = 0;
    await until('the writer notices the outage', () => {
      text(100 + during++);
      return writer.inOutage;
    });
    for (let i = 5; i < 20; i++) text(i);
    await restart();
    await until('the writer catches up after the restart', () => !writer.inOutage);
    await writer.flushed();

    const stored: TimelineEvent[] = await store.read('s1');
    expect(stored.map((e) => e.seq)).toEqual(Array.from({ length: writer.seq }, (_, i) => i + 1));
    expect(fenced).toEqual([]);
    expect(writer.isFenced).toBe(false);
    expect(frames.some((f) => f.kind === 'error')).toBe(true); // the outage was reported once it began
  });

  // Regression (issue 15 item 8): with `--appendonly no`, a restarted Redis held nothing of the
  // session, the writer's next batch did not continue the (now empty) log, and the writer fenced
  // itself ("another writer owns this timeline"), ending the session. Now it recognises the loss,
  // starts the log again with the events it still holds, records what was lost, and goes on.
  it('survives a Redis restarted without persistence: not fenced, recent events written again, the loss recorded', async () => {
    const { writer, store, frames, fenced, text, restart, kill } = await writerOnRealRedis(false);
    // More than the writer keeps to write again, so some events are really lost with the store.
    const before = MAX_REWRITTEN_EVENTS + 50;
    for (let i = 0; i < before; i++) text(i);
    await writer.flushed();
    expect(await store.lastSeq('s1')).toBe(before);

    kill();
    let during = 0;
    await until('the writer notices the outage', () => {
      text(1000 + during++);
      return writer.inOutage;
    });
    await restart();
    for (let i = 0; i < 10; i++) text(2000 + i);
    await until('the writer catches up after the restart', () => !writer.inOutage);
    await writer.flushed();

    expect(fenced).toEqual([]);
    expect(writer.isFenced).toBe(false);
    const stored: TimelineEvent[] = await store.read('s1');
    const seqs = stored.map((e) => e.seq);
    // Contiguous from the oldest event the writer still held (it keeps MAX_REWRITTEN_EVENTS of those
    // written before the outage) to the last one stamped; the older ones went with the store.
    expect(seqs[0]).toBeGreaterThan(1);
    expect(writer.seq - seqs[0]! + 1).toBeGreaterThanOrEqual(MAX_REWRITTEN_EVENTS + 10);
    expect(seqs).toEqual(Array.from({ length: writer.seq - seqs[0]! + 1 }, (_, i) => seqs[0]! + i));
    // Every event accepted since the outage began is there, and the loss is on the timeline.
    const lost = stored.filter((e) => e.type === 'session.error' && e.data.code === 'timeline_unavailable');
    expect(lost).toHaveLength(1);
    expect(lost[0]!.type === 'session.error' && lost[0]!.data.message).toContain(`up to seq ${seqs[0]! - 1}`);
    expect(frames.some((f) => f.kind === 'error' && f.code === 'timeline_unavailable')).toBe(true);
  });
});
