import { createTimelineStore, ReferenceModelPort, SessionHost } from '@venus/gpu-worker';
import { FunctionRegistry, InProcessExecutor } from '@venus/harness-functions';
import { SessionConfigSchema, type TimelineEvent, type WorkerToEdgeFrame } from '@venus/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatedLookup } from './support/gated-function.ts';
import { until } from './support/until.ts';

/**
 * The foreground never waits, shown by logic rather than timing: every delegated function blocks
 * until the test releases it, and meanwhile every session keeps stepping and speaking and answers
 * new input. Once released, each result is admitted at an eligible boundary after it landed, never
 * retroactively, as the recorded timelines show.
 */
const SESSIONS = 4;
let port: ReferenceModelPort;

beforeAll(async () => {
  port = await ReferenceModelPort.create();
});
afterAll(async () => {
  await port.close();
});

describe('foreground never waits for background work', () => {
  it('keeps every session stepping and speaking while all functions are blocked, then admits results causally', async () => {
    const gated = createGatedLookup();
    const executor = new InProcessExecutor({ registry: new FunctionRegistry([gated.fn]) });
    const store = createTimelineStore();
    const host = new SessionHost({ model: port, executor, store });
    const events = new Map<string, TimelineEvent[]>();
    const sent = new Map<string, number>();
    host.onFrame((frame: WorkerToEdgeFrame) => {
      if (frame.kind !== 'timeline') return;
      const list = events.get(frame.session) ?? [];
      list.push(frame.event);
      events.set(frame.session, list);
      // A client that plays audio as it arrives and acknowledges it.
      if (frame.event.type === 'assistant.audio') {
        const { utteranceId, startMs, durationMs } = frame.event.data;
        sent.set(utteranceId, startMs + durationMs);
        queueMicrotask(() =>
          host.handleFrame({
            kind: 'playback_ack',
            session: frame.session,
            utteranceId,
            playedMs: startMs + durationMs,
            source: 'client',
          }),
        );
      }
    });
    const ids = Array.from({ length: SESSIONS }, (_, i) => `fnw-${i}`);
    const config = SessionConfigSchema.parse({ chunkMs: 160 });
    for (const session of ids) host.handleFrame({ kind: 'open', session, tenant: 't', config });
    for (const session of ids)
      host.handleFrame({ kind: 'text', session, itemId: `${session}-1`, text: "What's the weather in Paris?" });
    const of = (s: string, type: TimelineEvent['type']) => (events.get(s) ?? []).filter((e) => e.type === type);

    await until('every session has a running delegation', () => gated.started.length >= SESSIONS);
    const stepsAtBlock = ids.map((s) => host.session(s)!.stats.steps);
    const audioAtBlock = ids.map((s) => of(s, 'assistant.audio').length);

    // While everything is blocked, each session keeps speaking and takes a second request.
    await until('sessions keep speaking while work is blocked', () =>
      ids.every((s, i) => of(s, 'assistant.audio').length >= (audioAtBlock[i] ?? 0) + 5),
    );
    for (const session of ids)
      host.handleFrame({ kind: 'text', session, itemId: `${session}-2`, text: 'What time is it in Tokyo?' });
    await until('a second delegation from every session', () => gated.started.length >= 2 * SESSIONS);
    ids.forEach((s, i) => {
      expect(host.session(s)!.stats.steps).toBeGreaterThan((stepsAtBlock[i] ?? 0) + 5);
      expect(of(s, 'work.result')).toHaveLength(0);
    });

    gated.release();
    await until(
      'every delegation settles',
      () =>
        ids.every((s) =>
          of(s, 'assistant.delegate').every((d) =>
            of(s, 'work.state').some(
              (w) =>
                w.type === 'work.state' &&
                d.type === 'assistant.delegate' &&
                w.data.workId === d.data.workId &&
                ['DELIVERED', 'CANCELLED', 'EXPIRED'].includes(w.data.state),
            ),
          ),
        ),
      60_000,
    );
    for (const s of ids) await host.session(s)!.flushed();

    // Causality, checked on the stored timelines.
    let admitted = 0;
    for (const session of ids) {
      const timeline = await store.read(session);
      expect(timeline.map((e) => e.seq)).toEqual(timeline.map((_, i) => i + 1));
      for (const a of timeline) {
        if (a.type !== 'work.admitted') continue;
        admitted += 1;
        const result = timeline.find((e) => e.seq === a.data.resultSeq);
        expect(result?.type).toBe('work.result');
        expect(result!.seq).toBeLessThan(a.seq);
        expect(result!.chunk).toBeLessThan(a.chunk);
        // No step before the admission boundary saw the result: the model spoke it only afterwards.
        const speaking = timeline.find(
          (e) =>
            e.type === 'work.state' &&
            e.data.workId === a.data.workId &&
            ['DELIVERING', 'DELIVERED'].includes(e.data.state),
        );
        expect(speaking!.seq).toBeGreaterThan(a.seq);
      }
      const delivered = timeline.filter((e) => e.type === 'work.state' && e.data.state === 'DELIVERED');
      expect(delivered.length).toBeGreaterThanOrEqual(1);
    }
    expect(admitted).toBeGreaterThanOrEqual(SESSIONS);
    await host.close();
    await executor.close();
    await store.close();
  }, 120_000);
});
