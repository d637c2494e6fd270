import { heardText } from '@venus/protocol';
import { describe, expect, it, vi } from 'vitest';
import type { Synthesize } from './dialogue-session.ts';
import { CHUNK_SAMPLES_24K, Driver, fakeSynthesize } from './dialogue-test-driver.ts';

const spans = (text: string) => text.match(/<delegate>[\s\S]*?<\/delegate>/g) ?? [];

describe('DialogueSession', () => {
  it('answers a weather request with one delegate span, text split across steps, paced audio', async () => {
    const drv = new Driver();
    drv.text("What's the weather like in paris?");
    const steps = await drv.until((s) => s.turnFinished);
    const text = steps.map((s) => s.text).join('');
    expect(spans(text)).toEqual(['<delegate>What is the weather in Paris right now?</delegate>']);
    expect(steps.filter((s) => s.text).every((s, i, all) => i === all.length - 1 || s.text.length <= 25)).toBe(true);
    expect(steps.every((s) => (s.audio?.length ?? 0) <= CHUNK_SAMPLES_24K)).toBe(true);
    const audioSteps = steps.filter((s) => s.audio);
    expect(audioSteps.map((s) => s.audioChunkSeq)).toEqual(audioSteps.map((_, i) => i));
    expect(steps.at(-1)).toMatchObject({ turnFinished: true, finishReason: 'completed', utteranceId: 'utt_1' });
    expect(drv.d.transcript.at(-1)?.text).not.toContain('delegate');
  });

  it('reports its synthesised reply as one spoken segment, and its context keeps what the host says was heard', async () => {
    for (const hostHeard of ['The time', undefined]) {
      const drv = new Driver();
      drv.text('what time is it in Tokyo');
      const steps = await drv.until((s) => s.audio !== null);
      const segments = steps.flatMap((s) => s.spokenSegments ?? []);
      expect(segments).toHaveLength(1);
      expect(segments[0]?.text).not.toContain('delegate');
      // The fake synthesiser speaks 20 ms per character.
      expect(segments[0]?.durationMs).toBe((segments[0]?.text.length ?? 0) * 20);
      drv.text('wait');
      expect((await drv.step()).finishReason).toBe('interrupted');
      drv.d.playbackAck('utt_1', 700, true, hostHeard);
      const kept = drv.d.transcript.find((e) => e.utteranceId === 'utt_1')?.text;
      // Without the host's text the dialogue applies the one rule to its own segments.
      expect(kept).toBe(hostHeard ?? heardText(segments, 700));
      expect(kept?.length).toBeGreaterThan(0);
    }
  });

  /** A synthesiser that answers only when `release` is called (as a busy TTS thread would, later). */
  function gatedSynthesize(): { synthesize: Synthesize; release: () => void } {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    return { synthesize: async (text, voice) => gate.then(() => fakeSynthesize(text, voice)), release };
  }

  it('gives an utterance its first speech on the step that starts it, when synthesis ends within the wait', async () => {
    const { synthesize, release } = gatedSynthesize();
    const drv = new Driver({ synthesize });
    drv.text('what time is it in Tokyo');
    const out = await drv.step();
    // The step started the reply before its speech existed: text only so far.
    expect(out).toMatchObject({ decision: 'speak', utteranceId: 'utt_1', audio: null });
    const completing = drv.d.completeStep(out);
    release();
    const completed = await completing;
    expect(completed).toBe(out);
    expect(completed.audio).toHaveLength(CHUNK_SAMPLES_24K);
    expect(completed.audioChunkSeq).toBe(0);
    expect(completed.spokenSegments).toHaveLength(1);
    // The next chunk carries on from there.
    expect(await drv.step()).toMatchObject({ utteranceId: 'utt_1', audioChunkSeq: 1 });
  });

  it('leaves the step text-only when synthesis outlasts the wait (a quarter of the chunk); the speech starts on the next', async () => {
    vi.useFakeTimers();
    try {
      const { synthesize, release } = gatedSynthesize();
      const drv = new Driver({ synthesize });
      drv.text('what time is it in Tokyo');
      const out = await drv.step();
      expect(out).toMatchObject({ utteranceId: 'utt_1', audio: null });
      let settled = false;
      const completing = drv.d.completeStep(out).then((o) => {
        settled = true;
        return o;
      });
      await vi.advanceTimersByTimeAsync(39);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1); // 160 ms chunks: at most 40 ms
      expect((await completing).audio).toBeNull();
      release();
      await vi.advanceTimersByTimeAsync(0); // the synthesis settles (promise jobs only)
      const next = await drv.step();
      expect(next).toMatchObject({ utteranceId: out.utteranceId, audioChunkSeq: 0 });
      expect(next.audio).toHaveLength(CHUNK_SAMPLES_24K);
    } finally {
      vi.useRealTimers();
    }
  });

  it('does not wait on a step that starts nothing, or whose speech is ready', async () => {
    const drv = new Driver();
    const quiet = await drv.step();
    expect(await drv.d.completeStep(quiet)).toBe(quiet);
    drv.text('what time is it in Tokyo');
    await Promise.resolve(); // the fake synthesiser answers on a microtask
    const steps = await drv.until((s) => s.audio !== null);
    const last = steps.at(-1)!;
    expect(await drv.d.completeStep(last)).toBe(last);
  });

  it('keeps speaking through a typed backchannel', async () => {
    const drv = new Driver();
    drv.text('what time is it in Tokyo');
    await drv.until((s) => s.audio !== null);
    drv.text('mm-hm');
    const s = await drv.step();
    expect(s.interruption).toEqual({ action: 'continue', cause: 'backchannel', cancelsWork: false });
    expect(s.audio).not.toBeNull();
    expect(s.turnFinished).toBe(false);
  });

  it('discards on "never mind" (cancelling work) and on a bare "wait" (not cancelling)', async () => {
    for (const [text, cancelsWork] of [
      ['never mind', true],
      ['wait', false],
    ] as const) {
      const drv = new Driver();
      drv.text('convert 5 miles to km');
      await drv.until((s) => s.audio !== null);
      drv.text(text);
      const s = await drv.step();
      expect(s).toMatchObject({ turnFinished: true, finishReason: 'interrupted', audio: null, utteranceId: 'utt_1' });
      expect(s.interruption).toEqual({ action: 'discard', cause: 'interruption', cancelsWork });
      expect((await drv.step()).decision).toBe('listen');
    }
  });

  it('repairs a correction with a continuation that carries the new slot', async () => {
    const drv = new Driver();
    drv.text('weather in Paris please');
    await drv.until((s) => s.audio !== null);
    drv.text('actually, make it Rome');
    const stop = await drv.step();
    expect(stop.interruption).toEqual({ action: 'repair', cause: 'interruption', cancelsWork: true });
    expect(stop.turnFinished).toBe(true);
    const steps = await drv.until((s) => s.turnFinished);
    expect(steps[0]?.continues).toEqual({ utteranceId: 'utt_1' });
    const text = steps.map((s) => s.text).join('');
    expect(text).toContain('Rome');
    expect(spans(text)).toEqual(['<delegate>What is the weather in Rome right now?</delegate>']);
  });

  it('parks for a new request, offers to resume after the answer, and resumes on "yes"', async () => {
    const drv = new Driver();
    drv.text('weather in Paris');
    await drv.until((s) => s.audio !== null);
    drv.text('what time is it in Tokyo?');
    const parkStep = await drv.step();
    expect(parkStep.interruption).toEqual({ action: 'park', cause: 'interruption', cancelsWork: false });
    drv.d.park('plan_1', 'It may take a few seconds, so bear with me.');
    const answer = await drv.until((s) => s.turnFinished);
    expect(answer.map((s) => s.text).join('')).toContain('<delegate>What time is it in Tokyo?</delegate>');
    const offer = await drv.until((s) => s.turnFinished);
    expect(offer[0]?.resumeOffer).toEqual({ planId: 'plan_1' });
    expect(offer.map((s) => s.text).join('')).toBe('Shall I go back to what I was saying before?');
    drv.text('yes please');
    const resumed = await drv.until((s) => s.turnFinished);
    expect(resumed[0]?.continues).toEqual({ planId: 'plan_1' });
    expect(resumed.map((s) => s.text).join('')).toBe('It may take a few seconds, so bear with me.');
  });

  it('drops the parked plan on "no"', async () => {
    const drv = new Driver();
    drv.text('weather in Paris');
    await drv.until((s) => s.audio !== null);
    drv.text('what is 12 times 7');
    await drv.step();
    drv.d.park('plan_1', 'It may take a few seconds.');
    await drv.until((s) => s.turnFinished);
    await drv.until((s) => s.turnFinished && s.utteranceId === 'utt_3');
    drv.text('no thanks');
    const reply = await drv.until((s) => s.turnFinished);
    expect(reply[0]?.continues).toBeUndefined();
    expect(reply.map((s) => s.text).join('')).toBe('Alright.');
  });

  it('speaks a prefilled backend result once per attempt, and keeps silent ones as context', async () => {
    const drv = new Driver();
    expect(
      drv.d.prefill({ text: '<backend>It is 18 degrees in Paris.</backend>', attemptId: 'a1', mode: 'speak' }),
    ).toEqual({
      attemptId: 'a1',
      deduplicated: false,
    });
    expect(
      drv.d.prefill({ text: '<backend>It is 18 degrees in Paris.</backend>', attemptId: 'a1', mode: 'speak' })
        .deduplicated,
    ).toBe(true);
    drv.d.prefill({ text: '<backend>Noted.</backend>', attemptId: 'a2', mode: 'silent' });
    const steps = await drv.until((s) => s.turnFinished);
    expect(steps[0]?.speaksPrefill).toEqual({ attemptId: 'a1' });
    expect(steps.map((s) => s.text).join('')).toBe('It is 18 degrees in Paris.');
    expect((await drv.step()).utteranceId).toBeNull();
    expect(drv.d.transcript.some((e) => e.role === 'backend' && e.text === 'Noted.')).toBe(true);
  });

  it('reads overlapping speech audio: short burst continues, sustained burst discards, quiet burst is background', async () => {
    const short = new Driver();
    short.text('weather in Paris');
    await short.until((s) => s.audio !== null);
    await short.step({ speech: true });
    await short.step({ speech: true });
    const ended = await short.until((s) => s.userSpeech?.state === 'stopped');
    expect(ended.at(-1)?.interruption).toEqual({ action: 'continue', cause: 'backchannel', cancelsWork: false });
    expect(ended.every((s) => s.finishReason !== 'interrupted')).toBe(true);

    const long = new Driver();
    long.text('weather in Paris');
    await long.until((s) => s.audio !== null);
    const steps = await long.until((s) => s.interruption !== undefined, { speech: true }, 10);
    expect(steps[0]?.userSpeech).toEqual({ state: 'started', probability: expect.any(Number) });
    expect(steps.at(-1)).toMatchObject({
      interruption: { action: 'discard', cause: 'interruption', cancelsWork: false },
      turnFinished: true,
      finishReason: 'interrupted',
    });

    const quiet = new Driver();
    quiet.text('weather in Paris');
    await quiet.until((s) => s.audio !== null);
    const q = await quiet.until((s) => s.interruption !== undefined, { speech: true, amplitude: 100 }, 10);
    expect(q.at(-1)?.interruption).toEqual({ action: 'continue', cause: 'background', cancelsWork: false });
  });

  it('keeps only the heard part of an interrupted utterance in its transcript', async () => {
    const drv = new Driver();
    drv.text('weather in Paris');
    await drv.until((s) => s.audio !== null);
    drv.text('stop');
    const s = await drv.step();
    drv.d.playbackAck(s.utteranceId ?? '', 400, true);
    const heard = drv.d.transcript.find((e) => e.utteranceId === 'utt_1')?.text ?? '';
    expect(heard.length).toBeGreaterThan(0);
    expect('Let me check the weather in Paris.'.startsWith(heard)).toBe(true);
  });
});

describe('regression: correction transcript cut off by its own speech tail', () => {
  // What broke: a spoken correction whose transcript arrived while the user was still talking was
  // read as a repair, and then the same, still-running speech burst reached 600 ms and was judged
  // as a second interruption that discarded the repaired reply.
  it('does not judge the burst that carried a typed interruption again', async () => {
    // Wherever the 600 ms mark of the burst falls relative to the repair, it must not discard it.
    for (const speechStepsBefore of [1, 2, 3]) {
      const drv = new Driver();
      drv.text('weather in Paris');
      await drv.until((s) => s.audio !== null);
      for (let i = 0; i < speechStepsBefore; i++) await drv.step({ speech: true });
      drv.text('actually, make it Rome');
      const repaired = await drv.step({ speech: true });
      expect(repaired.interruption?.action).toBe('repair');
      const after = [];
      for (let i = 0; i < 8; i++) after.push(await drv.step({ speech: true }));
      expect(after.filter((s) => s.interruption !== undefined)).toEqual([]);
      expect(after.some((s) => s.audio !== null)).toBe(true);
    }
  });

  describe('perception ticks (listen-only steps between chunk boundaries)', () => {
    it('hear without emitting, and the next chunk step paces out everything since the last one', async () => {
      const drv = new Driver();
      drv.text('weather in Paris');
      const first = await drv.until((s) => s.audio !== null);
      const speaking = first[first.length - 1]!;
      const ticks = [await drv.step({ listenOnly: true }), await drv.step({ listenOnly: true })];
      for (const t of ticks) {
        expect(t).toMatchObject({ utteranceId: null, audio: null, text: '', turnFinished: false });
      }
      const next = await drv.step();
      expect(next.utteranceId).toBe(speaking.utteranceId);
      // Three 160 ms periods since the last chunk step: two ticks and this step.
      expect(next.audio?.length).toBe(3 * CHUNK_SAMPLES_24K);
      expect(next.audioChunkSeq).toBe(speaking.audioChunkSeq + 1);
    });

    it('stop the assistant on a tick when the user takes the floor, ending the utterance there', async () => {
      const drv = new Driver();
      drv.text('weather in Paris');
      const first = await drv.until((s) => s.audio !== null);
      const id = first[first.length - 1]!.utteranceId;
      const ticks = await drv.until((s) => s.interruption !== undefined, { speech: true, listenOnly: true }, 20);
      const stop = ticks[ticks.length - 1]!;
      expect(stop.interruption).toMatchObject({ action: 'discard', cause: 'interruption' });
      expect(stop).toMatchObject({ utteranceId: id, turnFinished: true, finishReason: 'interrupted', audio: null });
      // The user's 160 ms ticks of speech reached the v1 rules' 600 ms mark.
      expect(ticks.length).toBeLessThanOrEqual(5);
      expect((await drv.step()).utteranceId).not.toBe(id);
    });
  });
});
