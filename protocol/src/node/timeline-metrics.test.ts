import { describe, expect, it } from 'vitest';
import type { WorkerToEdgeFrame } from '../relay-frames.ts';
import type { TimelineDraft } from '../timeline.ts';
import { VenusMetrics } from './metrics.ts';
import { TimelineMetrics } from './timeline-metrics.ts';

/** Hand-made timeline frames (a unit test: no session host), each at a session clock time. */
let seq = 0;
const frame = (atMs: number, draft: TimelineDraft, session = 's1'): WorkerToEdgeFrame =>
  ({ kind: 'timeline', session, event: { ...draft, session, seq: ++seq, chunk: 0, atMs } }) as WorkerToEdgeFrame;
const speech = (state: 'started' | 'stopped'): TimelineDraft => ({
  stream: 'user',
  type: 'user.speech',
  data: { state, probability: 0.9 },
});
const utterance = (phase: 'started' | 'finished'): TimelineDraft => ({
  stream: 'assistant',
  type: 'assistant.utterance',
  data: { utteranceId: 'u1', phase },
});
const audio = (startMs: number): TimelineDraft => ({
  stream: 'assistant',
  type: 'assistant.audio',
  data: {
    utteranceId: 'u1',
    audioChunkSeq: 0,
    audio: { segmentId: 'a:1', track: 'assistant', offsetMs: startMs, durationMs: 160, sampleRateHz: 24_000 },
    startMs,
    durationMs: 160,
  },
});
const interruption = (action: 'continue' | 'discard'): TimelineDraft => ({
  stream: 'assistant',
  type: 'assistant.interruption',
  data: { action, cause: 'interruption', utteranceId: 'u1', heardMs: 0, heardText: '', cancelledWork: [] },
});

async function histogram(metrics: VenusMetrics, name: string): Promise<{ count: number; sum: number }> {
  const values = (await metrics.registry.getSingleMetric(name)!.get()).values;
  const pick = (suffix: string) =>
    values.find((v) => (v as { metricName?: string }).metricName === `${name}_${suffix}`)?.value ?? 0;
  return { count: pick('count'), sum: pick('sum') };
}

describe('TimelineMetrics', () => {
  it('response latency runs from the end of user speech to the first audio of the next utterance', async () => {
    const metrics = new VenusMetrics({ process: 'test', defaultMetrics: false });
    const turns = new TimelineMetrics(metrics, 'w1');
    turns.observe(frame(1000, speech('started')));
    turns.observe(frame(2000, speech('stopped')));
    turns.observe(frame(2300, utterance('started')));
    turns.observe(frame(2450, audio(0)));
    turns.observe(frame(2610, audio(160)));
    const latency = await histogram(metrics, 'venus_response_latency_seconds');
    expect(latency.count).toBe(1);
    expect(latency.sum).toBeCloseTo(0.45, 6);
  });

  it('stop latency runs from speech over the assistant to its stop; a talked-through backchannel is none', async () => {
    const metrics = new VenusMetrics({ process: 'test', defaultMetrics: false });
    const turns = new TimelineMetrics(metrics, 'w1');
    turns.observe(frame(0, utterance('started')));
    turns.observe(frame(500, speech('started')));
    turns.observe(frame(700, interruption('continue')));
    turns.observe(frame(900, speech('stopped')));
    expect((await histogram(metrics, 'venus_stop_latency_seconds')).count).toBe(0);
    turns.observe(frame(1200, speech('started')));
    turns.observe(frame(1450, interruption('discard')));
    turns.observe(frame(1460, utterance('finished')));
    const stop = await histogram(metrics, 'venus_stop_latency_seconds');
    expect(stop.count).toBe(1);
    expect(stop.sum).toBeCloseTo(0.25, 6);
  });

  it('counts work states and forgets a session when it closes', async () => {
    const metrics = new VenusMetrics({ process: 'test', defaultMetrics: false });
    const turns = new TimelineMetrics(metrics, 'w1');
    for (const state of ['QUEUED', 'RUNNING', 'COMPLETED'] as const) {
      turns.observe(frame(0, { stream: 'background', type: 'work.state', data: { workId: 'w', state } }));
    }
    turns.observe(frame(0, speech('stopped'), 's2'));
    expect(turns.size).toBe(1);
    turns.observe({ kind: 'closed', session: 's2', reason: 'client' });
    expect(turns.size).toBe(0);
    const text = await metrics.render();
    expect(text).toContain('venus_delegations_total{state="QUEUED",process="test"} 1');
    expect(text).toContain('venus_delegations_total{state="COMPLETED",process="test"} 1');
  });
});

describe('VenusMetrics', () => {
  it('counts live connections by transport and reads 0 once they end', async () => {
    const metrics = new VenusMetrics({ process: 'test', defaultMetrics: false });
    const closed = [false, false, false];
    metrics.trackConnection('websocket', () => closed[0]!);
    metrics.trackConnection('websocket', () => closed[1]!);
    metrics.trackConnection('webrtc', () => closed[2]!);
    expect(await metrics.render()).toContain('venus_edge_connections{transport="websocket",process="test"} 2');
    closed.fill(true);
    const text = await metrics.render();
    expect(text).toContain('venus_edge_connections{transport="websocket",process="test"} 0');
    expect(text).toContain('venus_edge_connections{transport="webrtc",process="test"} 0');
  });

  it('a queue that never answers leaves the depth unread instead of holding the scrape', async () => {
    const metrics = new VenusMetrics({ process: 'test', defaultMetrics: false });
    metrics.watchQueue(() => new Promise(() => {}));
    metrics.watchQueue(async () => ({ waiting: 3 }));
    const text = await metrics.render();
    expect(text).toContain('venus_queue_jobs{state="waiting",process="test"} 3');
  });

  it('steps feed the step cost histogram; missed ones the deadline misses too', async () => {
    const metrics = new VenusMetrics({ process: 'test', defaultMetrics: false });
    metrics.recordStep('w1', 20, false);
    metrics.recordStep('w1', 180, true);
    const steps = await histogram(metrics, 'venus_step_cost_seconds');
    expect(steps.count).toBe(2);
    expect(steps.sum).toBeCloseTo(0.2, 6);
    expect(await metrics.render()).toContain('venus_deadline_misses_total{worker="w1",process="test"} 1');
  });
});
