import { describe, expect, it } from 'vitest';
import { CONSOLE_PAGE } from './console-page.ts';
import { TIMELINE_SCRIPT } from './console-timeline-script.ts';

interface TimelineApi {
  createTimelineModel(): unknown;
  applyTimelineEvent(model: unknown, event: unknown): void;
  laneCounts(model: unknown): { user: number; assistant: number; background: number };
  latencySummary(model: unknown): Record<string, { last: number; median: number; n: number } | null> & {
    missedSteps: { n: number; max: number };
  };
}

/** The console's timeline model, run outside a browser (it touches no DOM until it renders). */
const api = new Function(
  `${TIMELINE_SCRIPT}; return { createTimelineModel, applyTimelineEvent, laneCounts, latencySummary };`,
)() as TimelineApi;

let seq = 0;
const event = (atMs: number, stream: string, type: string, data: Record<string, unknown>) => ({
  session: 'sess_1',
  seq: ++seq,
  chunk: Math.floor(atMs / 200),
  atMs,
  stream,
  type,
  data,
});

describe('console page', () => {
  it('is one page whose script parses (no build step, nothing to fetch)', () => {
    const scripts = [...CONSOLE_PAGE.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
    expect(scripts).toHaveLength(1);
    expect(() => new Function(scripts[0]!)).not.toThrow();
    expect(CONSOLE_PAGE).not.toMatch(/<script[^>]+src=/);
    for (const id of ['timeline', 'count-user', 'count-assistant', 'count-background', 'latency', 'transcript']) {
      expect(CONSOLE_PAGE).toContain(`id="${id}"`);
    }
  });
});

describe('console timeline model', () => {
  it('puts speech, typed text, utterances, delegations and work into their lanes, with the delays between them', () => {
    const model = api.createTimelineModel();
    const events = [
      event(1000, 'user', 'user.speech', { state: 'started', probability: 0.9 }),
      event(2400, 'user', 'user.speech', { state: 'stopped', probability: 0.1 }),
      event(2500, 'user', 'user.text', { inputSeq: 3, itemId: 'item_1', text: "What's the weather in Paris?" }),
      event(2700, 'assistant', 'assistant.utterance', { utteranceId: 'utt_1', phase: 'started' }),
      event(2700, 'assistant', 'assistant.text', { utteranceId: 'utt_1', delta: 'Let me check.' }),
      event(2900, 'assistant', 'assistant.audio', {
        utteranceId: 'utt_1',
        audioChunkSeq: 0,
        startMs: 0,
        durationMs: 900,
      }),
      event(2900, 'assistant', 'assistant.delegate', {
        workId: 'work_1',
        query: 'weather Paris',
        evidenceCutoffSeq: 3,
        private: true,
      }),
      event(2950, 'background', 'work.state', { workId: 'work_1', state: 'QUEUED' }),
      event(3000, 'background', 'work.state', { workId: 'work_1', state: 'RUNNING', functionName: 'weather' }),
      event(3800, 'assistant', 'assistant.utterance', { utteranceId: 'utt_1', phase: 'finished', reason: 'completed' }),
      event(5000, 'background', 'work.state', { workId: 'work_1', state: 'COMPLETED' }),
      event(5400, 'background', 'work.admitted', { workId: 'work_1', resultSeq: 11, mode: 'speak' }),
      event(5400, 'background', 'work.state', { workId: 'work_1', state: 'DELIVERING' }),
      event(7000, 'background', 'work.state', { workId: 'work_1', state: 'DELIVERED' }),
      event(7100, 'system', 'deadline.missed', { lateMs: 35 }),
    ];
    for (const e of events) api.applyTimelineEvent(model, e);
    expect(api.laneCounts(model)).toEqual({ user: 2, assistant: 2, background: 1 });
    const latency = api.latencySummary(model);
    expect(latency.response).toEqual({ last: 400, median: 400, n: 1 }); // typed text at 2500, first audio at 2900
    expect(latency.dispatch?.last).toBe(100);
    expect(latency.run?.last).toBe(2000);
    expect(latency.admission?.last).toBe(400);
    expect(latency.delivery?.last).toBe(1600);
    expect(latency.missedSteps).toEqual({ n: 1, max: 35 });
  });

  it('does not count an utterance the assistant starts on its own as a response', () => {
    const model = api.createTimelineModel();
    api.applyTimelineEvent(
      model,
      event(100, 'assistant', 'assistant.utterance', { utteranceId: 'utt_9', phase: 'started' }),
    );
    api.applyTimelineEvent(
      model,
      event(300, 'assistant', 'assistant.audio', {
        utteranceId: 'utt_9',
        audioChunkSeq: 0,
        startMs: 0,
        durationMs: 200,
      }),
    );
    expect(api.latencySummary(model).response).toBeNull();
  });
});
