import type { MediaRef, TimelineEvent, TimelineReadOptions } from '@venus/protocol';
import { describe, expect, it } from 'vitest';
import { buildEvidence, readEvidence, type TimelineReader } from './evidence.ts';

const S = 's1';
let seq = 0;
const at = (atMs = seq * 160) => ({ session: S, seq: ++seq, chunk: seq, atMs });
const ref = (track: 'user' | 'assistant', n: number): MediaRef => ({
  segmentId: `${track[0]}:${n}`,
  track,
  offsetMs: n * 160,
  durationMs: 160,
  sampleRateHz: track === 'user' ? 16_000 : 24_000,
});
const said = (text: string): TimelineEvent => ({
  ...at(),
  stream: 'user',
  type: 'user.text',
  data: { inputSeq: seq, itemId: `i${seq}`, text },
});
const started = (utteranceId: string): TimelineEvent => ({
  ...at(),
  stream: 'assistant',
  type: 'assistant.utterance',
  data: { utteranceId, phase: 'started' },
});
const delta = (utteranceId: string, text: string): TimelineEvent => ({
  ...at(),
  stream: 'assistant',
  type: 'assistant.text',
  data: { utteranceId, delta: text },
});
const finished = (utteranceId: string, reason: 'completed' | 'discarded'): TimelineEvent => ({
  ...at(),
  stream: 'assistant',
  type: 'assistant.utterance',
  data: { utteranceId, phase: 'finished', reason },
});

describe('buildEvidence', () => {
  it('keeps typed text, replies heard to the end, and only the heard part of an interrupted reply', () => {
    seq = 0;
    const events: TimelineEvent[] = [
      said('What is on in Paris?'),
      started('u1'),
      delta('u1', 'A jazz festival '),
      delta('u1', 'and a marathon.'),
      finished('u1', 'completed'),
      started('u2'),
      delta('u2', 'The festival starts on Friday and runs all weekend.'),
      {
        ...at(),
        stream: 'assistant',
        type: 'assistant.interruption',
        data: {
          action: 'discard',
          cause: 'interruption',
          utteranceId: 'u2',
          heardMs: 900,
          heardText: 'The festival starts',
          cancelledWork: [],
        },
      },
      finished('u2', 'discarded'),
      // Still playing at the cutoff: what of it was heard is not known yet.
      started('u3'),
      delta('u3', 'Let me book'),
    ];
    const evidence = buildEvidence(S, seq, events);
    expect(evidence.transcript.map((l) => [l.speaker, l.source, l.text])).toEqual([
      ['user', 'typed', 'What is on in Paris?'],
      ['assistant', 'spoken', 'A jazz festival and a marathon.'],
      ['assistant', 'heard', 'The festival starts'],
    ]);
  });

  it('ignores events past the cutoff whatever the reader returned', () => {
    seq = 0;
    const events = [said('first'), said('second'), said('after the cutoff')];
    expect(buildEvidence(S, 2, events).transcript.map((l) => l.text)).toEqual(['first', 'second']);
  });

  it('bounds the window by session time and the transcript by characters, newest kept', () => {
    seq = 0;
    const old = { ...said('an hour ago'), atMs: 0 };
    const recent = Array.from({ length: 10 }, (_, i) => ({
      ...said(`line ${i} ${'x'.repeat(40)}`),
      atMs: 3_600_000 + i,
    }));
    const evidence = buildEvidence(S, seq, [old, ...recent], {
      windowMs: 60_000,
      maxTranscriptChars: 100,
      maxAudioRefs: 16,
    });
    expect(evidence.transcript.map((l) => l.text.slice(0, 6))).toEqual(['line 8', 'line 9']);
  });

  it('leaves out a reply that began before the window (only part of its text is there)', () => {
    seq = 0;
    const events = [
      { ...delta('u9', 'half of it'), atMs: 100_000 },
      { ...finished('u9', 'completed'), atMs: 100_100 },
    ];
    expect(buildEvidence(S, seq, events).transcript).toEqual([]);
  });

  it('joins audio events into runs per utterance and unbroken microphone input, with their segments', () => {
    seq = 0;
    const mic = (n: number, inputSeq: number): TimelineEvent => ({
      ...at(),
      stream: 'user',
      type: 'user.audio',
      data: { inputSeq, audio: ref('user', n), durationMs: 160 },
    });
    const speech = (n: number): TimelineEvent => ({
      ...at(),
      stream: 'assistant',
      type: 'assistant.audio',
      data: { utteranceId: 'u1', audioChunkSeq: n, audio: ref('assistant', n), startMs: n * 160, durationMs: 160 },
    });
    const events = [mic(0, 0), speech(0), mic(1, 1), speech(1), mic(2, 5)];
    const { audio } = buildEvidence(S, seq, events);
    expect(audio.map((a) => [a.stream, a.fromSeq, a.toSeq, a.durationMs, a.first.segmentId, a.last.segmentId])).toEqual(
      [
        ['user', 1, 3, 320, 'u:0', 'u:1'],
        ['assistant', 2, 4, 320, 'a:0', 'a:1'],
        ['user', 5, 5, 160, 'u:2', 'u:2'],
      ],
    );
  });
});

/** A fake timeline reader whose log the test extends between reads. */
class FakeTimelineReader implements TimelineReader {
  log: TimelineEvent[] = [];
  reads = 0;
  onRead: () => void = () => {};
  async read(_session: string, options: TimelineReadOptions = {}): Promise<TimelineEvent[]> {
    this.reads++;
    const found = this.log.filter((e) => e.seq >= (options.fromSeq ?? 1) && e.seq <= (options.toSeq ?? Infinity));
    this.onRead();
    return found;
  }
}

describe('readEvidence', () => {
  it('waits for a timeline that has not reached the cutoff yet, and still never reads past it', async () => {
    seq = 0;
    const reader = new FakeTimelineReader();
    reader.log = [said('one')];
    const late = [said('two'), said('three, after the cutoff')];
    // The host's write lands after the first read, cutoff event and a later one together.
    reader.onRead = () => {
      if (reader.reads === 1) reader.log.push(...late);
    };
    const evidence = await readEvidence(reader, { session: S, evidenceCutoffSeq: 2 });
    expect(evidence).toMatchObject({ complete: true, cutoffSeq: 2 });
    expect(evidence.transcript.map((l) => l.text)).toEqual(['one', 'two']);
    expect(reader.reads).toBe(2);
  });

  it('makes do with what is there once the waits are spent', async () => {
    seq = 0;
    const reader = new FakeTimelineReader();
    reader.log = [said('one')];
    const evidence = await readEvidence(
      reader,
      { session: S, evidenceCutoffSeq: 4 },
      { limits: { catchUpDelaysMs: [0, 0] } },
    );
    expect(evidence).toMatchObject({ complete: false });
    expect(evidence.transcript.map((l) => l.text)).toEqual(['one']);
    expect(reader.reads).toBe(3);
  });

  it('reads only the last maxEvents up to the cutoff, and nothing for an empty timeline', async () => {
    const reader = new FakeTimelineReader();
    const asked: TimelineReadOptions[] = [];
    const spy: TimelineReader = {
      read: async (s, o = {}) => {
        asked.push(o);
        return reader.read(s, o);
      },
    };
    await readEvidence(
      spy,
      { session: S, evidenceCutoffSeq: 1000 },
      { limits: { maxEvents: 50, catchUpDelaysMs: [] } },
    );
    expect(asked).toEqual([{ fromSeq: 951, toSeq: 1000 }]);
    asked.length = 0;
    expect(await readEvidence(spy, { session: S, evidenceCutoffSeq: 0 })).toMatchObject({
      transcript: [],
      complete: true,
    });
    expect(asked).toEqual([]);
  });
});
