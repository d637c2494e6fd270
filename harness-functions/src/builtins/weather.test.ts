import { describe, expect, it } from 'vitest';
import type { FunctionContext } from '../function-definition.ts';
import { createWeather } from './weather.ts';
import { loadBundledWeatherSample } from './weather-sample.ts';

function context(progress: (message: string) => void = () => {}): FunctionContext {
  return { signal: new AbortController().signal, progress, session: 's1', workId: 'w1' };
}

describe('weather', () => {
  const weather = createWeather({ latencyMs: 0 });

  it('bundles about thirty cities', () => {
    expect(loadBundledWeatherSample().cities.length).toBeGreaterThanOrEqual(30);
  });

  it('speaks the current weather for a known city', async () => {
    const progress: string[] = [];
    const output = await weather.run(
      weather.extract("what's the weather in Paris")!,
      context((m) => progress.push(m)),
    );
    expect(output.speech).toBe("It's 18 degrees and partly cloudy in Paris.");
    expect(output.data).toMatchObject({ city: 'Paris', current: { temperatureC: 18, humidityPct: 62 } });
    expect(progress).toEqual(['Checking the weather service for Paris']);
  });

  it('uses "with" for conditions that are nouns', async () => {
    expect((await weather.run({ city: 'London', when: 'now' }, context())).speech).toBe(
      "It's 14 degrees with light rain in London.",
    );
  });

  it('speaks tomorrow and the three-day outlook', async () => {
    expect((await weather.run(weather.extract('weather in Paris tomorrow')!, context())).speech).toBe(
      'Tomorrow in Paris: light rain, with a high of 16 and a low of 10 degrees.',
    );
    expect((await weather.run(weather.extract('forecast for sao paulo')!, context())).speech).toBe(
      'Over the next 3 days in Sao Paulo: cloudy, then showers, then partly cloudy, with highs from 20 to 23 degrees.',
    );
  });

  it('fails clearly for a city it has no data for', async () => {
    const args = weather.extract("what's the weather like in Atlantis?");
    expect(args).toEqual({ city: 'Atlantis', when: 'now' });
    await expect(weather.run(args!, context())).rejects.toMatchObject({
      code: 'function_failed',
      message: "I don't have weather for Atlantis",
    });
  });

  it('needs a weather word', () => {
    expect(weather.extract('I am flying to Paris')).toBeNull();
  });
});
