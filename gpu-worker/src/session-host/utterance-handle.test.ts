import { describe, expect, it } from 'vitest';
import { UtteranceHandle } from './utterance-handle.ts';

function spoken(text = 'It is sunny in Paris today.', ms = 2700): UtteranceHandle {
  const u = new UtteranceHandle('utt_1');
  u.addText(text);
  u.addAudio(ms, 1000);
  return u;
}

describe('UtteranceHandle: played-audio accounting', () => {
  it('acknowledgements only move forward and never past the audio sent', () => {
    const u = spoken();
    u.ack(500);
    u.ack(300);
    expect(u.ackedMs).toBe(500);
    u.ack(99_999);
    expect(u.ackedMs).toBe(2700);
  });

  it('a truncate is authoritative even when it moves playout back', () => {
    const u = spoken();
    u.ack(2000);
    u.truncate(700);
    expect(u.ackedMs).toBe(700);
    expect(u.heardMs(999_999)).toBe(700);
  });

  it('before any acknowledgement, heard is the real-time estimate since the first audio', () => {
    const u = spoken();
    expect(u.heardMs(1000)).toBe(0);
    expect(u.heardMs(1800)).toBe(800);
    expect(u.heardMs(99_000)).toBe(2700);
    expect(new UtteranceHandle('silent').heardMs(5000)).toBe(0);
  });

  it('is fully played only once finished and acknowledged to its end', () => {
    const u = spoken();
    u.ack(2700);
    expect(u.fullyPlayed).toBe(false);
    u.finish('completed');
    expect(u.fullyPlayed).toBe(true);
  });

  it('uses the segments the model reports for the heard text', () => {
    const u = new UtteranceHandle('u');
    u.addText('One two. Three four five.');
    u.addAudio(3000, 0);
    u.addSegments([
      { text: 'One two.', durationMs: 1000 },
      { text: 'Three four five.', durationMs: 2000 },
    ]);
    expect(u.heardText(1000)).toBe('One two.');
    expect(u.heardText(2000)).toBe('One two. Three');
  });
});

describe('UtteranceHandle: interrupt(action)', () => {
  for (const [action, reason] of [
    ['discard', 'discarded'],
    ['repair', 'repaired'],
    ['park', 'parked'],
  ] as const) {
    it(`${action}: ends the utterance at what was heard (${reason}) and resolves done`, async () => {
      // 27 characters over 2700 ms: "sunny" ends at 1100 ms.
      const v = spoken();
      v.ack(1100);
      const outcome = v.interrupt(action, 5000);
      expect(outcome.action).toBe(action);
      expect(outcome.heardMs).toBe(1100);
      expect(outcome.heardText).toBe('It is sunny');
      expect(outcome.remainder).toBe('in Paris today.');
      expect(v.ackedMs).toBe(1100);
      expect(v.reason).toBe(reason);
      await expect(v.done).resolves.toBe(reason);
    });
  }

  it('an interrupt before any audio was heard keeps nothing and parks everything', () => {
    const u = new UtteranceHandle('u');
    u.addText('Let me tell you about Paris.');
    const outcome = u.interrupt('park', 0);
    expect(outcome).toEqual({ action: 'park', heardMs: 0, heardText: '', remainder: 'Let me tell you about Paris.' });
  });

  it('a second end does not change the first', () => {
    const u = spoken();
    expect(u.finish('parked')).toBe(true);
    expect(u.finish('completed')).toBe(false);
    expect(u.reason).toBe('parked');
  });
});
