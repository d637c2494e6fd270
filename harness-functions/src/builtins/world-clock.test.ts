import { describe, expect, it } from 'vitest';
import type { FunctionContext } from '../function-definition.ts';
import { createWorldClock } from './world-clock.ts';

function context(): FunctionContext {
  return { signal: new AbortController().signal, progress: () => {}, session: 's1', workId: 'w1' };
}

// Wednesday 15 January 2025, 12:42 UTC (winter in the north, summer in the south).
const JANUARY = Date.UTC(2025, 0, 15, 12, 42);
// Tuesday 15 July 2025, 12:42 UTC (northern daylight saving time).
const JULY = Date.UTC(2025, 6, 15, 12, 42);

describe('world_clock', () => {
  it.each([
    [JANUARY, 'Tokyo', "It's 9:42 PM in Tokyo."],
    [JANUARY, 'New York', "It's 7:42 AM in New York."],
    [JULY, 'New York', "It's 8:42 AM in New York."],
    [JANUARY, 'London', "It's 12:42 PM in London."],
    [JANUARY, 'Sydney', "It's 11:42 PM in Sydney."],
    [JANUARY, 'Mumbai', "It's 6:12 PM in Mumbai."],
  ])('at %d, the time in %s', async (now, city, speech) => {
    const clock = createWorldClock({ latencyMs: 0, now: () => now });
    expect((await clock.run({ city, ask: 'time' }, context())).speech).toBe(speech);
  });

  it('speaks the date when asked for the day, with structured data', async () => {
    const clock = createWorldClock({ latencyMs: 0, now: () => JANUARY });
    const output = await clock.run(clock.extract('what day is it in Tokyo')!, context());
    expect(output.speech).toBe("It's Wednesday, January 15 in Tokyo, 9:42 PM local time.");
    expect(output.data).toMatchObject({ city: 'Tokyo', timeZone: 'Asia/Tokyo', utcOffset: 'GMT+09:00' });
  });

  it('understands aliases and fails clearly on unknown cities', async () => {
    const clock = createWorldClock({ latencyMs: 0, now: () => JANUARY });
    expect(clock.extract('what time is it in NYC?')).toEqual({ city: 'New York', ask: 'time' });
    const unknown = clock.extract('what time is it in Atlantis');
    expect(unknown).toEqual({ city: 'Atlantis', ask: 'time' });
    await expect(clock.run(unknown!, context())).rejects.toMatchObject({
      code: 'function_failed',
      message: "I don't know the time zone for Atlantis",
    });
  });

  it('does not take a city name alone for a question about the time', () => {
    expect(createWorldClock().extract('book me a flight to Tokyo')).toBeNull();
  });
});
