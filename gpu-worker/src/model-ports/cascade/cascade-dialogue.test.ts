import type { ContextEntry, OutputStep } from '@venus/protocol';
import { describe, expect, it } from 'vitest';
import { CascadeDialogue } from './cascade-dialogue.ts';
import { type CascadeBackends, type ChatMessage, RequestAborted } from './openai-endpoints.ts';

/** Scripted endpoints: transcripts and replies in order; after its first delta, chat waits for `open()` when closed. */
class FakeBackends implements CascadeBackends {
  readonly transcribed: Int16Array[] = [];
  readonly chats: ChatMessage[][] = [];
  readonly spoken: string[] = [];
  transcripts: string[] = [];
  replies: string[][] = [];
  private gate: Promise<void> | null = null;
  private release: () => void = () => {};

  close(): void {
    this.gate = new Promise((resolve) => {
      this.release = resolve;
    });
  }

  open(): void {
    this.gate = null;
    this.release();
  }

  async transcribe(pcm16k: Int16Array): Promise<string> {
    this.transcribed.push(pcm16k);
    return this.transcripts.shift() ?? 'hello';
  }

  async *chat(messages: readonly ChatMessage[], signal: AbortSignal): AsyncGenerator<string> {
    this.chats.push(messages.map((m) => ({ ...m })));
    const aborted = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
    const deltas = this.replies.shift() ?? ['Hi there, friend.'];
    for (const [i, delta] of deltas.entries()) {
      const gate = this.gate;
      if (i > 0 && gate !== null) await Promise.race([gate, aborted]);
      if (signal.aborted) throw new RequestAborted('aborted');
      yield delta;
    }
  }

  /** 50 ms of speech per character. */
  async speak(text: string): Promise<Int16Array> {
    this.spoken.push(text);
    return new Int16Array(text.length * 1200);
  }
}

const STEP_SAMPLES = 2560;

/** Loud noise (about -16 dBFS) or quiet noise (about -50 dBFS), deterministic. */
function noise(amplitude: number): Int16Array {
  const out = new Int16Array(STEP_SAMPLES);
  let seed = 7;
  for (let i = 0; i < out.length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    out[i] = ((seed % 2001) - 1000) * (amplitude / 1000);
  }
  return out;
}

/** Drives a dialogue with VAD probabilities chosen by the test: speech or silence per 160 ms step. */
class Driver {
  readonly d: CascadeDialogue;
  private seq = 0;
  private chunk = 0;

  constructor(
    readonly backends: FakeBackends,
    instructions?: string,
  ) {
    this.d = new CascadeDialogue({
      sessionId: 's',
      incarnation: 0,
      backends,
      ...(instructions ? { instructions } : {}),
    });
  }

  async step(kind: 'speech' | 'quiet' | 'silence', audible = false): Promise<OutputStep> {
    const pcm = kind === 'speech' ? noise(6000) : kind === 'quiet' ? noise(100) : new Int16Array(STEP_SAMPLES);
    this.d.appendAudio(++this.seq, pcm);
    this.chunk += 1;
    const plan = this.d.beginStep({
      chunk: this.chunk,
      inputSeqCutoff: this.seq,
      atMs: this.chunk * 160,
      assistantAudible: audible,
    });
    const p = new Float32Array(plan.frames.length).fill(kind === 'silence' ? 0.02 : 0.9);
    const out = this.d.finishStep(plan, p);
    await new Promise((r) => setImmediate(r));
    return out;
  }

  async steps(kind: 'speech' | 'quiet' | 'silence', n: number, audible = false): Promise<OutputStep[]> {
    const out: OutputStep[] = [];
    for (let i = 0; i < n; i++) out.push(await this.step(kind, audible));
    return out;
  }

  say(text: string): void {
    this.d.appendText(++this.seq, text);
  }

  restore(entry: ContextEntry): void {
    this.d.appendHistory(++this.seq, entry);
  }
}

describe('CascadeDialogue turn-taking', () => {
  it('transcribes a burst with its pre-roll once 500 ms of silence end it', async () => {
    const backends = new FakeBackends();
    const drive = new Driver(backends);
    await drive.steps('silence', 5);
    const speech = await drive.steps('speech', 6);
    expect(speech[0]?.userSpeech?.state).toBe('started');
    await drive.steps('silence', 3);
    expect(backends.transcribed).toHaveLength(0);
    const [end] = await drive.steps('silence', 1);
    expect(end?.userSpeech?.state).toBe('stopped');
    expect(backends.transcribed).toHaveLength(1);
    // Pre-roll (3 steps of the 480 ms), the burst, and the silence that ended it.
    expect(backends.transcribed[0]?.length).toBe(STEP_SAMPLES * (3 + 6 + 4));
  });

  it('merges speech that goes on after a pause into one turn when the reply has not started', async () => {
    const backends = new FakeBackends();
    backends.transcripts = ['what is the weather', 'what is the weather in Paris tomorrow'];
    backends.close();
    const drive = new Driver(backends);
    await drive.steps('speech', 5);
    await drive.steps('silence', 4);
    expect(backends.transcribed).toHaveLength(1);
    expect(backends.chats).toHaveLength(1);
    const resumed = await drive.steps('speech', 5);
    expect(resumed.every((s) => s.utteranceId === null)).toBe(true);
    await drive.steps('silence', 4);
    expect(backends.transcribed).toHaveLength(2);
    expect(backends.transcribed[1]!.length).toBeGreaterThan(backends.transcribed[0]!.length + 4 * STEP_SAMPLES);
    backends.open();
    const reply = await drive.steps('silence', 3);
    expect(reply.some((s) => s.text === 'Hi there, friend.')).toBe(true);
    expect(backends.chats[1]?.slice(1)).toEqual([{ role: 'user', content: 'what is the weather in Paris tomorrow' }]);
  });

  it('keeps speaking through a short burst (backchannel) and ignores quiet background speech', async () => {
    const backends = new FakeBackends();
    backends.replies = [
      ['Here is a long answer that will keep going for quite some time, with many words and no end in sight.'],
    ];
    const drive = new Driver(backends);
    drive.say('tell me something');
    const first = await drive.steps('silence', 2);
    const id = first.find((s) => s.utteranceId !== null)?.utteranceId;
    expect(id).toBeTruthy();
    const overlap = [...(await drive.steps('speech', 3, true)), ...(await drive.steps('silence', 5, true))];
    const verdict = overlap.find((s) => s.interruption);
    expect(verdict?.interruption).toEqual({ action: 'continue', cause: 'backchannel', cancelsWork: false });
    expect(overlap.every((s) => s.utteranceId === id && !s.turnFinished)).toBe(true);

    await drive.steps('quiet', 8, true);
    await drive.steps('silence', 5, true);
    expect(backends.transcribed).toHaveLength(0);
    const rest = await drive.steps('silence', 40);
    expect(rest.find((s) => s.turnFinished)).toMatchObject({ utteranceId: id, finishReason: 'completed' });
    expect(drive.d.context.at(-1)).toEqual({
      role: 'assistant',
      content: 'Here is a long answer that will keep going for quite some time, with many words and no end in sight.',
    });
  });

  it('discards on sustained speech, aborts the reply and answers what the user said instead', async () => {
    const backends = new FakeBackends();
    backends.replies = [['One sentence to start. ', 'And more to come.'], ['Sure, Tokyo then.']];
    backends.transcripts = ['no, Tokyo'];
    const drive = new Driver(backends);
    drive.say('tell me about Paris');
    backends.close();
    const before = await drive.steps('silence', 2);
    const id = before.find((s) => s.utteranceId !== null)?.utteranceId;
    const overlap = await drive.steps('speech', 6, true);
    const stop = overlap.find((s) => s.interruption);
    expect(stop).toMatchObject({
      utteranceId: id,
      interruption: { action: 'discard', cause: 'interruption', cancelsWork: false },
      turnFinished: true,
      finishReason: 'interrupted',
    });
    backends.open();
    const after = await drive.steps('silence', 8);
    expect(backends.transcribed).toHaveLength(1);
    expect(after.map((s) => s.text).join('')).toBe('Sure, Tokyo then.');
    expect(backends.spoken).not.toContain('And more to come.');
    expect(backends.chats[1]?.slice(1)).toEqual([
      { role: 'user', content: 'tell me about Paris' },
      { role: 'assistant', content: 'One sentence' },
      { role: 'user', content: 'no, Tokyo' },
    ]);
  });
});

describe('CascadeDialogue restored history', () => {
  it('puts restored items into the chat messages unanswered, and a system item after the instructions', async () => {
    const backends = new FakeBackends();
    const drive = new Driver(backends, 'Speak French.');
    drive.restore({ role: 'user', text: 'Where is my order?' });
    drive.restore({ role: 'backend', text: 'lookup_order returned: shipped' });
    drive.restore({ role: 'assistant', text: 'It shipped on Monday.' });
    drive.restore({ role: 'system', text: 'Be brief.' });
    await drive.steps('silence', 3);
    expect(backends.chats).toHaveLength(0);
    drive.say('what did you just tell me?');
    await drive.steps('silence', 2);
    const [messages] = backends.chats;
    expect(messages?.[0]?.content).toContain('Instructions for this conversation:\nSpeak French.\nBe brief.');
    expect(messages?.slice(1)).toEqual([
      { role: 'user', content: 'Where is my order?\n<backend>lookup_order returned: shipped</backend>' },
      { role: 'assistant', content: 'It shipped on Monday.' },
      { role: 'user', content: 'what did you just tell me?' },
    ]);
  });

  it('applies response instructions to the next reply only', async () => {
    const backends = new FakeBackends();
    const drive = new Driver(backends, 'Speak French.');
    drive.d.instructNextResponse('Answer in one word.');
    drive.say('hello');
    await drive.steps('silence', 40);
    drive.say('and again');
    await drive.steps('silence', 2);
    const systems = backends.chats.map((messages) => messages[0]?.content ?? '');
    expect(systems).toHaveLength(2);
    expect(systems[0]).toContain('Instructions for this conversation:\nSpeak French.\nAnswer in one word.');
    expect(systems[1]).toContain('Instructions for this conversation:\nSpeak French.');
    expect(systems[1]).not.toContain('Answer in one word.');
  });
});
