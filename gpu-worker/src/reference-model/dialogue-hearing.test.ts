import type { OutputStep, RecogniserEvent, RecogniserStream } from '@venus/protocol';
import { describe, expect, it } from 'vitest';
import { DialogueSession } from './dialogue-session.ts';

/** A fake recogniser stream: each utterance's partial and final are scripted by the test. */
class ScriptedStream implements RecogniserStream {
  readonly unknownWords = [];
  readonly script: { partial?: string; text: string; inGrammar?: boolean }[] = [];
  private utterance = 0;
  private readonly queue: RecogniserEvent[] = [];
  private wake: (() => void) | undefined;
  readonly events: AsyncIterable<RecogniserEvent> = {
    [Symbol.asyncIterator]: async function* (this: ScriptedStream) {
      for (;;) {
        const next = this.queue.shift();
        if (next) yield next;
        else await new Promise<void>((r) => (this.wake = r));
      }
    }.bind(this),
  };
  push(): void {
    const partial = this.script[this.utterance]?.partial;
    if (partial) this.emit({ type: 'partial', utterance: this.utterance, text: partial, score: -30, audioMs: 0 });
  }
  endUtterance(): void {
    const s = this.script[this.utterance] ?? { text: '' };
    const inGrammar = s.inGrammar ?? true;
    const final = { type: 'final' as const, utterance: this.utterance++, text: s.text, score: -40 };
    this.emit({ ...final, confidence: inGrammar ? 0.95 : 0.2, inGrammar, audioMs: 800 });
  }
  async close(): Promise<void> {}
  private emit(e: RecogniserEvent): void {
    this.queue.push(e);
    this.wake?.();
  }
}

/** Steps a session with 160 ms of audio each, scored as speech or silence by a fake VAD. */
function driver(options: { samplesPerChar?: number } = {}) {
  const stream = new ScriptedStream();
  const d = new DialogueSession({
    sessionId: 's1',
    incarnation: 0,
    synthesize: async (text) => new Int16Array(text.length * (options.samplesPerChar ?? 480)).fill(1000),
    recognise: async () => stream,
  });
  let seq = 0;
  let chunk = 0;
  /** `head`: the overlap head's class probabilities for every row the step makes (a fake head). */
  const step = async (speech: boolean, head?: readonly number[]): Promise<OutputStep> => {
    await new Promise((r) => setTimeout(r, 0));
    d.appendAudio(
      ++seq,
      new Int16Array(2560).map((_, i) => (speech ? Math.round(3000 * Math.sin(i / 5)) : 0)),
    );
    const plan = d.beginStep({ chunk, inputSeqCutoff: seq, atMs: ++chunk * 160, assistantAudible: false });
    const probabilities = new Float32Array(plan.frames.length).fill(speech ? 0.95 : 0.01);
    if (head === undefined) return d.finishStep(plan, probabilities);
    const rows = d.hearStep(plan, probabilities);
    return d.finishStep(
      plan,
      probabilities,
      rows.map(() => Float32Array.from(head)),
    );
  };
  const say = async (speechSteps: number, silenceSteps = 6, head?: readonly number[]) => {
    const out: OutputStep[] = [];
    for (let i = 0; i < speechSteps; i++) out.push(await step(true, head));
    for (let i = 0; i < silenceSteps; i++) out.push(await step(false, head));
    return out;
  };
  const text = (t: string) => d.appendText(++seq, t);
  return { d, stream, step, say, text };
}

describe('DialogueSession hearing words', () => {
  it('reports a spoken request as a transcript with its inputs and acts on it like typed text', async () => {
    const { stream, say } = driver();
    stream.script.push({ text: 'what time is it in tokyo' });
    const steps = await say(8, 20);
    const transcripts = steps.flatMap((s) => s.userTranscripts ?? []);
    expect(transcripts).toEqual([
      expect.objectContaining({ text: 'what time is it in tokyo', inGrammar: true, addressed: true }),
    ]);
    expect(transcripts[0]!.audio.fromInputSeq).toBeGreaterThanOrEqual(1);
    expect(transcripts[0]!.audio.toInputSeq).toBeGreaterThan(transcripts[0]!.audio.fromInputSeq);
    expect(steps.map((s) => s.text).join('')).toMatch(/<delegate>What time is it in Tokyo\?<\/delegate>/);
  });

  it('answers once when a client sends its own transcript of the same speech, before or after the words are heard', async () => {
    for (const order of ['text first', 'words first'] as const) {
      const { stream, say, step, text } = driver();
      stream.script.push({ text: 'what time is it in tokyo' });
      const steps = await say(8, order === 'text first' ? 0 : 8);
      text('What time is it in Tokyo?');
      for (let i = 0; i < 24; i++) steps.push(await step(false));
      const said = steps.map((s) => s.text).join('');
      expect((said.match(/<delegate>/g) ?? []).length, order).toBe(1);
      expect(steps.flatMap((s) => s.userTranscripts ?? []).length, order).toBe(1);
    }
  });

  it('does not force low-confidence words onto a command: it asks the user to say it again', async () => {
    const { stream, say } = driver();
    stream.script.push({ text: 'what is the weather in paris', inGrammar: false });
    // Unclear words may be the start of a request: the model waits out a mid-turn pause first.
    const steps = await say(8, 24);
    expect(steps.flatMap((s) => s.userTranscripts ?? [])).toEqual([
      expect.objectContaining({ inGrammar: false, addressed: true }),
    ]);
    const said = steps.map((s) => s.text).join('');
    expect(said).not.toMatch(/delegate/);
    expect(said).toMatch(/did not catch that/);
  });

  it('holds the turn through a pause after a fragment, and hears the two parts as one request', async () => {
    const { stream, say } = driver();
    stream.script.push({ text: 'could you tell me' }, { text: 'the weather in paris' });
    // "could you tell me", then 6 x 160 ms of silence (the VAD ends the burst after 500 ms), then the rest.
    const first = await say(6, 6);
    expect(first.map((s) => s.text).join('')).toBe('');
    expect(first.some((s) => s.utteranceId !== null)).toBe(false);
    const rest = await say(8, 20);
    expect(rest.map((s) => s.text).join('')).toMatch(/<delegate>What is the weather in Paris right now\?<\/delegate>/);
    expect([...first, ...rest].flatMap((s) => s.userTranscripts ?? []).map((t) => t.text)).toEqual([
      'could you tell me',
      'the weather in paris',
    ]);
  });

  it('answers a fragment alone once the user stays silent past the mid-turn pause', async () => {
    const { stream, say } = driver();
    stream.script.push({ text: "what's the weather" });
    const steps = await say(6, 12);
    expect(steps.map((s) => s.text).join('')).toBe('');
    const later = await say(0, 10);
    expect(later.map((s) => s.text).join('')).toMatch(/which city/i);
  });

  it('stops at once when the partial words say "stop", before the 600 ms rule', async () => {
    const { d, stream, step, say } = driver();
    stream.script.push({ text: 'what is the weather in berlin' }, { partial: 'stop', text: 'stop' });
    await say(8, 2);
    // The answer is being spoken.
    let out = await step(false);
    for (let i = 0; i < 20 && out.decision !== 'speak'; i++) out = await step(false);
    expect(out.decision).toBe('speak');
    const overlap: OutputStep[] = [];
    for (let i = 0; i < 3; i++) overlap.push(await step(true));
    const stopped = overlap.find((s) => s.interruption && s.interruption.action !== 'continue');
    expect(stopped?.interruption).toMatchObject({ action: 'discard', cause: 'interruption' });
    // Three 160 ms steps is under 600 ms of speech: the words did it, not the duration.
    expect(d.voice.activeBurst?.speechMs ?? 0).toBeLessThan(600);
  });

  it('takes the floor late when a burst the head carried on through as a backchannel turns out to correct the answer', async () => {
    // P(interruption, backchannel, other-directed, background): a fake head sure of a backchannel.
    const backchannel = [0.02, 0.95, 0.02, 0.01];
    for (const [said, repairs] of [
      ['no no i meant paris', true],
      ['yeah yeah', false],
    ] as const) {
      const { stream, step, say } = driver({ samplesPerChar: 4800 });
      stream.script.push({ text: 'what is the weather in rome' }, { text: said });
      await say(8, 2, backchannel);
      let out = await step(false, backchannel);
      for (let i = 0; i < 20 && out.decision !== 'speak'; i++) out = await step(false, backchannel);
      expect(out.decision).toBe('speak');
      const overlap: OutputStep[] = [];
      for (let i = 0; i < 8; i++) overlap.push(await step(true, backchannel));
      // The head carried on through the burst before any word of it was heard.
      expect(overlap.map((s) => s.interruption).find(Boolean)).toMatchObject({
        action: 'continue',
        cause: 'backchannel',
      });
      const after: OutputStep[] = [];
      for (let i = 0; i < 8; i++) after.push(await step(false, backchannel));
      const late = after.map((s) => s.interruption).find(Boolean);
      const transcript = after.flatMap((s) => s.userTranscripts ?? []).find((t) => t.text === said);
      if (repairs) {
        expect(late, said).toMatchObject({ action: 'repair', cause: 'interruption' });
        expect(transcript?.addressed, said).toBe(true);
        expect(after.map((s) => s.text ?? '').join(''), said).toMatch(/paris/i);
      } else {
        expect(late, said).toBeUndefined();
        expect(transcript?.addressed, said).toBe(false);
      }
    }
  });
});
