import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createBuiltinFunctions } from './builtins/builtin-functions.ts';
import type { VenusFunction } from './function-definition.ts';
import { RouterPlanner, routerTokens } from './router-planner.ts';

const functions = createBuiltinFunctions({ latencyMs: 0 });
const planner = new RouterPlanner();

describe('RouterPlanner with the built-ins', () => {
  it.each([
    ['what time is it in Tokyo', 'world_clock', { city: 'Tokyo', ask: 'time' }],
    ['current time in New York right now', 'world_clock', { city: 'New York', ask: 'time' }],
    ['What day is it in Sydney?', 'world_clock', { city: 'Sydney', ask: 'date' }],
    ["what's the weather in Paris", 'weather', { city: 'Paris', when: 'now' }],
    ['is it raining in London', 'weather', { city: 'London', when: 'now' }],
    ['how hot is it in Dubai?', 'weather', { city: 'Dubai', when: 'now' }],
    ['weather forecast for Tokyo tomorrow', 'weather', { city: 'Tokyo', when: 'tomorrow' }],
    ['do I need an umbrella in seattle', 'weather', { city: 'Seattle', when: 'now' }],
    ['what is the temperature in Madrid', 'weather', { city: 'Madrid', when: 'now' }],
    ["what's the weather in Atlantis", 'weather', { city: 'Atlantis', when: 'now' }],
    ['what is 12% of 80', 'calculator', { kind: 'arithmetic', expression: '12 % of 80' }],
    ["what's 3 + 4 * 2", 'calculator', { kind: 'arithmetic', expression: '3 + 4 * 2' }],
    ['how much is 15 plus 27', 'calculator', { kind: 'arithmetic', expression: '15 + 27' }],
    ['calculate (2+3)^2/5', 'calculator', { kind: 'arithmetic', expression: '( 2 + 3 ) ^ 2 / 5' }],
    ['convert 5 miles to km', 'calculator', { kind: 'convert', value: 5, from: 'mi', to: 'km' }],
    ['72 fahrenheit in celsius', 'calculator', { kind: 'convert', value: 72, from: 'f', to: 'c' }],
    ['how many feet in 3 meters', 'calculator', { kind: 'convert', value: 3, from: 'm', to: 'ft' }],
    ['convert 100 km/h to mph', 'calculator', { kind: 'convert', value: 100, from: 'km/h', to: 'mph' }],
    ['convert 20 degrees celsius to fahrenheit', 'calculator', { kind: 'convert', value: 20, from: 'c', to: 'f' }],
    ['What is the status of my pending requests?', 'work_status', {}],
    ["How's that going?", 'work_status', {}],
    ['is my lookup done yet', 'work_status', {}],
  ])('%s -> %s', async (query, functionName, args) => {
    expect(await planner.plan(query, functions)).toEqual({ functionName, args });
  });

  it.each(['tell me a joke', 'book me a flight to Paris', 'I am going to Tokyo next week', 'what is 42'])(
    '%s -> null',
    async (query) => {
      expect(await planner.plan(query, functions)).toBeNull();
    },
  );
});

describe('RouterPlanner scoring', () => {
  const fakeEcho: VenusFunction<{ text: string }> = {
    name: 'echo',
    description: 'Repeats a phrase back.',
    parameters: z.object({ text: z.string().min(3) }),
    examples: ['echo hello there'],
    extract: (query) => {
      const match = /echo (.*)/.exec(query);
      return match ? { text: match[1] ?? '' } : null;
    },
    run: async ({ text }) => ({ data: text, speech: text }),
  };

  it('drops arguments that fail the schema instead of returning them', async () => {
    expect(await planner.plan('echo hi', [fakeEcho])).toBeNull();
    expect(await planner.plan('echo hello', [fakeEcho])).toEqual({ functionName: 'echo', args: { text: 'hello' } });
  });

  it('falls through to the next candidate when the best one cannot extract', async () => {
    const fakeGreedy: VenusFunction<{ text: string }> = { ...fakeEcho, name: 'greedy', extract: () => null };
    const plan = await planner.plan('echo hello there', [fakeGreedy, fakeEcho]);
    expect(plan?.functionName).toBe('echo');
  });

  it('tokenizes words, stems plurals and keeps arithmetic symbols, but not bare numbers', () => {
    expect(routerTokens("What's 3 + 4 miles in São Paulo?")).toEqual(['+', 'mile', 'sao', 'paulo']);
  });
});
