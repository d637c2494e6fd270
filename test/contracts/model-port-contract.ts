import { randomUUID } from 'node:crypto';
import type { ModelPort, ModelSession, OutputStep } from '@venus/protocol';
import { VenusError } from '@venus/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/** Hands out increasing input sequence numbers for one session; feed and idle draw from it too. */
export interface InputCursor {
  next(): number;
  readonly last: number;
}

export interface ModelPortFixture {
  port: ModelPort;
  cleanup(): Promise<void>;
  /** Makes the model say something: user speech, a typed question, whatever the port takes. */
  feed(session: ModelSession, input: InputCursor): Promise<void>;
  /**
   * Keeps input flowing between steps, as a streaming microphone does (one chunk of silence for a
   * port that steps on audio). Called before every step of the conformance loops.
   */
  idle?(session: ModelSession, input: InputCursor): Promise<void>;
  /**
   * False for a port whose model fences inputs itself (the official serving port has no cutoff on
   * its wire and reports the one it reached): its steps are then checked to report a cutoff no
   * later than the inputs appended, instead of the requested one.
   */
  honoursRequestedCutoff?: boolean;
  /**
   * True for a port whose replies or speech come on their own time (a synthesis thread, an HTTP
   * endpoint), not from the steps: the conformance loops then step until the outcome, within
   * OUTCOME_BUDGET_MS, instead of giving up after a count of steps a loaded machine may not fit.
   */
  repliesInRealTime?: boolean;
}

const MAX_STEPS_TO_SPEAK = 12;
const MAX_STEPS_TO_FINISH = 40;
/** The wait for an outcome of a port that replies in real time; it only ends a hung test. */
const OUTCOME_BUDGET_MS = 30_000;

function cursor(): InputCursor {
  let last = 0;
  return {
    next: () => ++last,
    get last() {
      return last;
    },
  };
}

/** Asserts the shape every OutputStep must have, whatever the model. */
export function expectValidStep(step: OutputStep, chunk: number): void {
  expect(Number.isInteger(step.stepSeq)).toBe(true);
  expect(step.chunk).toBe(chunk);
  expect(Number.isInteger(step.inputSeqCutoff)).toBe(true);
  expect(['listen', 'speak']).toContain(step.decision);
  expect(typeof step.text).toBe('string');
  expect(step.utteranceId === null || (typeof step.utteranceId === 'string' && step.utteranceId.length > 0)).toBe(true);
  expect(step.audio === null || step.audio instanceof Int16Array).toBe(true);
  expect(Number.isInteger(step.audioChunkSeq) && step.audioChunkSeq >= 0).toBe(true);
  expect(typeof step.turnFinished).toBe('boolean');
  if (step.finishReason !== undefined) expect(['completed', 'interrupted']).toContain(step.finishReason);
  if (step.utteranceId === null) {
    expect(step.audio).toBeNull();
    expect(step.text).toBe('');
  }
}

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<void> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, `expected a rejection with ${code}`).not.toBeNull();
  expect(VenusError.isInstance(err) ? err.code : String(err)).toBe(code);
}

/**
 * One conformance suite for every ModelPort implementation: the official-service adapter, the
 * reference model, and whatever comes next. A fixture provides the port and a way to make its model
 * speak; the suite checks the contract in `protocol/src/model-port.ts`.
 */
export function modelPortContract(name: string, makePort: () => Promise<ModelPortFixture>): void {
  describe(`ModelPort contract: ${name}`, () => {
    let fx: ModelPortFixture;
    const sessions: ModelSession[] = [];
    let chunk = 0;

    beforeEach(async () => {
      fx = await makePort();
      chunk = 0;
    });

    afterEach(async () => {
      await Promise.allSettled(sessions.splice(0).map((s) => s.close('test_done')));
      await fx.cleanup();
    });

    async function open(sessionId: string = `s-${randomUUID()}`, incarnation = 0): Promise<ModelSession> {
      const s = await fx.port.openSession({ sessionId, incarnation });
      sessions.push(s);
      return s;
    }

    /** Whether another step may still bring the outcome: a count of steps, or the budget in real time. */
    function mayStep(steps: number, maxSteps: number, started: number): boolean {
      return fx.repliesInRealTime ? Date.now() - started < OUTCOME_BUDGET_MS : steps < maxSteps;
    }

    async function stepOnce(s: ModelSession, input: InputCursor): Promise<OutputStep> {
      await fx.idle?.(s, input);
      const c = chunk++;
      const step = await s.step({ chunk: c, inputSeqCutoff: input.last, atMs: c * 1000, assistantAudible: false });
      expectValidStep(step, c);
      return step;
    }

    it('describes itself', async () => {
      const caps = await fx.port.capabilities();
      expect(caps.model.length).toBeGreaterThan(0);
      expect(typeof caps.modelRevision).toBe('string');
      expect(caps.specialTokens.listen).toBeTruthy();
      expect(caps.specialTokens.speak).toBeTruthy();
      for (const token of Object.values(caps.specialTokens)) expect(token.length).toBeGreaterThan(0);
      expect(Number.isInteger(caps.maxSessions) && caps.maxSessions >= 1).toBe(true);
      for (const flag of [caps.audioInput, caps.videoInput, caps.textInput, caps.nativeAudioOutput])
        expect(typeof flag).toBe('boolean');
      expect(caps.audioInput || caps.textInput).toBe(true);
      expect(caps.inputSampleRateHz).toBe(16_000);
      expect(caps.outputSampleRateHz).toBe(24_000);
    });

    it('opens the session and incarnation it was asked for', async () => {
      const id = `s-${randomUUID()}`;
      const s = await open(id, 3);
      expect(s.sessionId).toBe(id);
      expect(s.incarnation).toBe(3);
    });

    it('acknowledges inputs with their own sequence numbers, in order', async () => {
      const caps = await fx.port.capabilities();
      const s = await open();
      const input = cursor();
      const sent: number[] = [];
      const pending: Array<Promise<{ inputSeq: number }>> = [];
      // Fire-and-forget, as a session host does: the port keeps them in order.
      for (let i = 0; i < 4; i++) {
        const inputSeq = input.next();
        sent.push(inputSeq);
        if (caps.audioInput) pending.push(s.appendAudio({ inputSeq, pcm16k: new Int16Array(1600) }));
        else pending.push(s.appendText({ inputSeq, itemId: `i${inputSeq}`, text: 'hello' }));
      }
      const acks = await Promise.all(pending);
      expect(acks.map((a) => a.inputSeq)).toEqual(sent);
      const textSeq = input.next();
      if (caps.textInput)
        expect(await s.appendText({ inputSeq: textSeq, itemId: 'typed', text: 'hi' })).toEqual({ inputSeq: textSeq });
      else await rejectsWith(s.appendText({ inputSeq: textSeq, itemId: 'typed', text: 'hi' }), 'unsupported_feature');
    });

    it('steps with increasing stepSeq and a valid shape', async () => {
      const s = await open();
      const input = cursor();
      let previous = Number.NEGATIVE_INFINITY;
      for (let i = 0; i < 4; i++) {
        const step = await stepOnce(s, input);
        expect(step.stepSeq).toBeGreaterThan(previous);
        previous = step.stepSeq;
      }
    });

    it('speaks after being fed, then finishes the turn', async () => {
      const s = await open();
      const input = cursor();
      await fx.feed(s, input);
      let spoken: OutputStep | null = null;
      let steps = 0;
      let previous = Number.NEGATIVE_INFINITY;
      let finished = false;
      let text = '';
      let audioSamples = 0;
      const started = Date.now();
      while (mayStep(steps, MAX_STEPS_TO_FINISH, started) && !finished) {
        const step = await stepOnce(s, input);
        steps += 1;
        expect(step.stepSeq).toBeGreaterThan(previous);
        previous = step.stepSeq;
        if (!spoken && step.utteranceId !== null && (step.text.length > 0 || step.audio !== null)) spoken = step;
        if (spoken && step.utteranceId === spoken.utteranceId) {
          expect(step.decision === 'speak' || step.turnFinished).toBe(true);
          text += step.text;
          audioSamples += step.audio?.length ?? 0;
          finished = step.turnFinished;
        }
        if (!spoken && !fx.repliesInRealTime) expect(steps).toBeLessThan(MAX_STEPS_TO_SPEAK);
      }
      expect(spoken, 'the model never spoke').not.toBeNull();
      expect(finished, 'the utterance never finished').toBe(true);
      expect(text.length + audioSamples).toBeGreaterThan(0);
      const id = spoken?.utteranceId as string;
      await s.playbackAck({ utteranceId: id, playedMs: 500, final: false });
      await s.playbackAck({ utteranceId: id, playedMs: 1000 * steps, final: true });
    });

    it('never lets a step see input past its inputSeqCutoff', async () => {
      const s = await open();
      const input = cursor();
      await fx.idle?.(s, input);
      const cutoff = input.last;
      // What would make the model speak arrives with sequence numbers beyond the fence.
      await fx.feed(s, input);
      for (let i = 0; i < MAX_STEPS_TO_SPEAK; i++) {
        const c = chunk++;
        const step = await s.step({ chunk: c, inputSeqCutoff: cutoff, atMs: c * 1000, assistantAudible: false });
        expectValidStep(step, c);
        if (fx.honoursRequestedCutoff === false) {
          expect(step.inputSeqCutoff).toBeLessThanOrEqual(input.last);
          continue;
        }
        expect(step.inputSeqCutoff).toBe(cutoff);
        expect(step.utteranceId, `step ${i} answered input past its cutoff`).toBeNull();
      }
      // Once the fence moves past them, the same inputs are answered.
      let spoke = false;
      const started = Date.now();
      for (let i = 0; mayStep(i, MAX_STEPS_TO_SPEAK, started) && !spoke; i++)
        spoke = (await stepOnce(s, input)).utteranceId !== null;
      expect(spoke, 'the model never answered the inputs once the fence passed them').toBe(true);
    });

    it('deduplicates a prefill by attemptId', async () => {
      const s = await open();
      const request = {
        text: '<backend>It is 18 degrees in Paris.</backend>',
        workId: 'work-1',
        attemptId: 'work-1:0',
        mode: 'speak' as const,
      };
      const first = await s.prefill(request);
      expect(first).toEqual({ attemptId: 'work-1:0', deduplicated: false });
      const second = await s.prefill(request);
      expect(second).toEqual({ attemptId: 'work-1:0', deduplicated: true });
    });

    it('accepts playback acknowledgements', async () => {
      const s = await open();
      await expect(s.playbackAck({ utteranceId: 'u-unknown', playedMs: 0, final: false })).resolves.toBeUndefined();
    });

    it('fences the old session out when the same session opens with a higher incarnation', async () => {
      const id = `s-${randomUUID()}`;
      const old = await open(id, 1);
      const fresh = await open(id, 2);
      expect(fresh.incarnation).toBe(2);
      const input = cursor();
      await rejectsWith(
        old.step({ chunk: 0, inputSeqCutoff: 0, atMs: 0, assistantAudible: false }),
        'stale_incarnation',
      );
      await rejectsWith(old.appendAudio({ inputSeq: input.next(), pcm16k: new Int16Array(160) }), 'stale_incarnation');
      await rejectsWith(
        old.prefill({ text: '<backend>x</backend>', attemptId: 'a', mode: 'silent' }),
        'stale_incarnation',
      );
      // The new incarnation steps normally (stepOnce checks the shape of what it returns).
      await stepOnce(fresh, input);
    });

    it('refuses to reopen with an incarnation that is not newer', async () => {
      const id = `s-${randomUUID()}`;
      await open(id, 5);
      await rejectsWith(fx.port.openSession({ sessionId: id, incarnation: 4 }), 'stale_incarnation');
    });

    it('rejects steps after close', async () => {
      const s = await open();
      await s.close('test');
      const err = await s.step({ chunk: 0, inputSeqCutoff: 0, atMs: 0, assistantAudible: false }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(VenusError.isInstance(err)).toBe(true);
      await expect(s.close('again')).resolves.toBeUndefined();
    });
  });
}
