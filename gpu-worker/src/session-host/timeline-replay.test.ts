import type { TimelineDraft, TimelineEvent } from '@venus/protocol';
import { describe, expect, it } from 'vitest';
import { RECENT_AUDIO_WINDOW_MS, replayTimeline } from './timeline-replay.ts';

const audioRef = {
  segmentId: 'm1',
  track: 'assistant' as const,
  offsetMs: 0,
  durationMs: 0,
  sampleRateHz: 24_000 as const,
};

function timeline(drafts: TimelineDraft[]): TimelineEvent[] {
  return drafts.map((d, i) => ({ ...d, session: 's1', seq: i + 1, chunk: i, atMs: i * 10 }) as TimelineEvent);
}

const started = (utteranceId: string): TimelineDraft => ({
  stream: 'assistant',
  type: 'assistant.utterance',
  data: { utteranceId, phase: 'started' },
});
const said = (utteranceId: string, delta: string, durationMs: number): TimelineDraft[] => [
  { stream: 'assistant', type: 'assistant.text', data: { utteranceId, delta } },
  {
    stream: 'assistant',
    type: 'assistant.audio',
    data: { utteranceId, audioChunkSeq: 0, audio: { ...audioRef, durationMs }, startMs: 0, durationMs },
  },
];
const acked = (utteranceId: string, playedMs: number): TimelineDraft => ({
  stream: 'system',
  type: 'playback.ack',
  data: { utteranceId, playedMs, source: 'client' },
});

describe('replayTimeline', () => {
  it('keeps what the user said and heard, not what was only generated', () => {
    const events = timeline([
      { stream: 'system', type: 'session.incarnation', data: { incarnation: 0, reason: 'opened' } },
      { stream: 'user', type: 'user.text', data: { inputSeq: 3, itemId: 'i1', text: 'what is the weather' } },
      started('u1'),
      ...said('u1', 'Which city would you like the weather for?', 2000),
      acked('u1', 2000),
      { stream: 'assistant', type: 'assistant.utterance', data: { utteranceId: 'u1', phase: 'finished' } },
      started('u2'),
      ...said('u2', 'Never played at all.', 1000),
      { stream: 'assistant', type: 'assistant.utterance', data: { utteranceId: 'u2', phase: 'finished' } },
    ]);
    const replayed = replayTimeline(events);
    expect(replayed.history).toEqual([
      { role: 'user', text: 'what is the weather' },
      { role: 'assistant', text: 'Which city would you like the weather for?' },
    ]);
    expect(replayed.lastInputSeq).toBe(3);
    expect(replayed.cut).toBeNull();
  });

  it('reports the utterance cut by the handover with only its heard part, and the open work', () => {
    const events = timeline([
      { stream: 'system', type: 'session.incarnation', data: { incarnation: 2, reason: 'resumed' } },
      started('u1'),
      ...said('u1', 'Let me check the weather in Paris. It may take a few seconds.', 4000),
      {
        stream: 'assistant',
        type: 'assistant.delegate',
        data: { workId: 'work_1', query: 'weather in Paris', evidenceCutoffSeq: 1, private: true },
      },
      { stream: 'background', type: 'work.state', data: { workId: 'work_1', state: 'QUEUED' } },
      { stream: 'background', type: 'work.state', data: { workId: 'work_1', state: 'RUNNING' } },
      {
        stream: 'assistant',
        type: 'assistant.delegate',
        data: { workId: 'work_2', query: 'time in Oslo', evidenceCutoffSeq: 1, private: true },
      },
      { stream: 'background', type: 'work.state', data: { workId: 'work_2', state: 'CANCELLED' } },
      acked('u1', 1500),
    ]);
    const replayed = replayTimeline(events);
    expect(replayed.lastIncarnation).toBe(2);
    expect(replayed.cut?.utteranceId).toBe('u1');
    const heard = replayed.cut?.heardText ?? '';
    expect(heard.length).toBeGreaterThan(0);
    expect('Let me check the weather in Paris. It may take a few seconds.'.startsWith(heard)).toBe(true);
    expect(heard.length).toBeLessThan('Let me check the weather in Paris. It may take a few seconds.'.length);
    expect(replayed.openWorks).toEqual([
      { workId: 'work_1', query: 'weather in Paris', utteranceId: 'u1', state: 'RUNNING', createdAtMs: 40 },
    ]);
  });

  it('keeps an admitted result and the plan parked but not resumed', () => {
    const result = {
      workId: 'work_1',
      session: 's1',
      incarnation: 0,
      ok: true,
      text: 'It is 18 degrees in Paris.',
      policy: 'when_idle' as const,
      completedAtMs: 0,
      expiresAtMs: 1e13,
    };
    const events = timeline([
      { stream: 'background', type: 'work.result', data: { result } },
      { stream: 'background', type: 'work.admitted', data: { workId: 'work_1', resultSeq: 1, mode: 'silent' } },
      { stream: 'assistant', type: 'assistant.parked', data: { planId: 'p1', utteranceId: 'u1', remainder: 'rest' } },
    ]);
    const replayed = replayTimeline(events);
    expect(replayed.history).toEqual([{ role: 'backend', text: 'It is 18 degrees in Paris.' }]);
    expect(replayed.parked).toEqual({ planId: 'p1', utteranceId: 'u1', remainder: 'rest' });
  });

  it('puts restored history back into the rebuilt context in its place, and counts its input seqs', () => {
    const restored = (inputSeq: number, role: 'user' | 'assistant' | 'system' | 'backend', text: string) =>
      ({
        stream: 'system',
        type: 'conversation.restored',
        data: { inputSeq, itemId: `i${inputSeq}`, role, text },
      }) as const;
    const events = timeline([
      restored(1, 'system', 'Answer briefly.'),
      restored(2, 'user', 'Where is my order?'),
      restored(3, 'backend', 'The function lookup_order was called with {"id":"4417"} and returned: shipped'),
      restored(4, 'assistant', 'Your order 4417 shipped on Monday.'),
      { stream: 'user', type: 'user.text', data: { inputSeq: 5, itemId: 'i5', text: 'what did you just tell me?' } },
    ]);
    const replayed = replayTimeline(events);
    expect(replayed.history).toEqual([
      { role: 'system', text: 'Answer briefly.' },
      { role: 'user', text: 'Where is my order?' },
      { role: 'backend', text: 'The function lookup_order was called with {"id":"4417"} and returned: shipped' },
      { role: 'assistant', text: 'Your order 4417 shipped on Monday.' },
      { role: 'user', text: 'what did you just tell me?' },
    ]);
    expect(replayed.lastInputSeq).toBe(5);
  });

  it('keeps the microphone input after the last recognised utterance as the recent audio window, bounded', () => {
    const mic = (inputSeq: number, durationMs = 100): TimelineDraft => ({
      stream: 'user',
      type: 'user.audio',
      data: {
        inputSeq,
        audio: {
          segmentId: `u:${inputSeq}`,
          track: 'user',
          offsetMs: inputSeq * 100,
          durationMs,
          sampleRateHz: 16_000,
        },
        durationMs,
      },
    });
    const transcript = (toInputSeq: number): TimelineDraft => ({
      stream: 'user',
      type: 'user.transcript',
      data: {
        text: 'what time is it in tokyo',
        confidence: 0.9,
        inGrammar: true,
        addressed: true,
        audio: { fromInputSeq: 1, toInputSeq, durationMs: 400 },
      },
    });
    // The transcript of inputs 1-4 came while 5 and 6 were already stored: only what follows it counts.
    const midUtterance = replayTimeline(timeline([1, 2, 3, 4, 5, 6].map((n) => mic(n)).concat(transcript(4), mic(7))));
    expect(midUtterance.recentAudio.map((a) => a.inputSeq)).toEqual([5, 6, 7]);
    expect(midUtterance.recentAudio[0]!.audio.segmentId).toBe('u:5');
    // A long stretch without a recognised utterance: only the last RECENT_AUDIO_WINDOW_MS of it.
    const long = replayTimeline(timeline(Array.from({ length: 100 }, (_, i) => mic(i + 1))));
    const kept = long.recentAudio.map((a) => a.inputSeq);
    expect(kept).toHaveLength(RECENT_AUDIO_WINDOW_MS / 100);
    expect(kept.at(-1)).toBe(100);
    // Everything heard: nothing to hear again.
    expect(replayTimeline(timeline([mic(1), mic(2), transcript(2)])).recentAudio).toEqual([]);
    // Frames of no length cannot grow it without bound.
    expect(replayTimeline(timeline(Array.from({ length: 2_000 }, (_, i) => mic(i + 1, 0)))).recentAudio.length).toBe(
      400,
    );
  });
});
