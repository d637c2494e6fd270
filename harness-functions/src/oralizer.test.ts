import { DELEGATION_LIMITS, VenusError } from '@venus/protocol';
import { describe, expect, it } from 'vitest';
import { DefaultOralizer } from './oralizer.ts';

const oralizer = new DefaultOralizer();

describe('DefaultOralizer', () => {
  it('speaks the function speech on one line', () => {
    expect(oralizer.oralize({ ok: true, functionName: 'weather', speech: '  It is\n sunny.  ' })).toBe('It is sunny.');
  });

  it('strips reserved protocol tags', () => {
    const text = oralizer.oralize({ ok: true, speech: 'Done <backend>x</backend> and </delegate> <parked id="1">.' });
    expect(text).not.toMatch(/<\/?\s*(delegate|backend|parked)/i);
    expect(text).toBe('Done x and .');
  });

  it('trims long speech to the result limit', () => {
    const text = oralizer.oralize({ ok: true, speech: 'word '.repeat(2000) });
    expect(text.length).toBeLessThanOrEqual(DELEGATION_LIMITS.maxResultChars);
    expect(text.endsWith('…')).toBe(true);
  });

  it('apologizes with a speakable reason', () => {
    expect(
      oralizer.oralize({ ok: false, error: new VenusError('function_failed', "I don't have weather for Mars") }),
    ).toBe("Sorry, I couldn't get that: I don't have weather for Mars.");
    expect(oralizer.oralize({ ok: false, error: new VenusError('function_timeout', 'no result within 5 ms') })).toBe(
      "Sorry, I couldn't get that: it took too long.",
    );
    expect(oralizer.oralize({ ok: false, error: new VenusError('function_not_found', 'none') })).toBe(
      "Sorry, I couldn't get that: I don't have a way to do that yet.",
    );
    expect(oralizer.oralize({ ok: false })).toBe("Sorry, I couldn't get that: something went wrong.");
  });
});
