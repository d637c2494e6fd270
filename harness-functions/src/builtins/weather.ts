import { VenusError } from '@venus/protocol';
import { z } from 'zod';
import { abortableSleep } from '../abortable.ts';
import type { VenusFunction } from '../function-definition.ts';
import type { BuiltinOptions } from './latency.ts';
import { findKnownPlace, normalizePlace, placeIndex, trailingPlace } from './place-match.ts';
import { type CityWeather, loadBundledWeatherSample, type WeatherSample } from './weather-sample.ts';

export const WeatherArgsSchema = z.object({
  city: z.string().trim().min(1).max(80).describe('A city name, e.g. "Paris"'),
  when: z.enum(['now', 'tomorrow', 'outlook']).default('now').describe('Current conditions, tomorrow, or 3 days'),
});
export type WeatherArgs = z.infer<typeof WeatherArgsSchema>;

export interface WeatherOptions extends BuiltinOptions {
  /** Replaces the bundled sample (tests, demos with other cities). */
  sample?: WeatherSample;
}

/** Without one of these a city name alone ("book a flight to Paris") is no request for the weather. */
const WEATHER_WORDS =
  /\b(?:weather|forecast|outlook|temperature|degrees|rain\w*|snow\w*|sunny|sun|cloud\w*|wind\w*|humid\w*|hot|cold|warm|chilly|umbrella|jacket|coat|storm\w*|fog\w*)\b/;
/** Conditions that read as nouns take "with": "18 degrees with light rain", not "and light rain". */
const NOUN_CONDITION = /(?:rain|snow|drizzle|showers|thunderstorms|fog|haze|sleet|hail)$/;

function describeCurrent(city: CityWeather): string {
  const { condition, temperatureC } = city.current;
  const joiner = NOUN_CONDITION.test(condition) ? 'with' : 'and';
  return `It's ${degrees(temperatureC)} ${joiner} ${condition} in ${city.city}.`;
}

function describeTomorrow(city: CityWeather): string {
  const day = city.outlook[0]!;
  return `Tomorrow in ${city.city}: ${day.condition}, with a high of ${day.highC} and a low of ${degrees(day.lowC)}.`;
}

function describeOutlook(city: CityWeather): string {
  const conditions = city.outlook.map((day) => day.condition).join(', then ');
  const highs = city.outlook.map((day) => day.highC);
  const lowest = Math.min(...highs);
  const highest = Math.max(...highs);
  const range = lowest === highest ? `highs of ${degrees(lowest)}` : `highs from ${lowest} to ${degrees(highest)}`;
  return `Over the next ${city.outlook.length} days in ${city.city}: ${conditions}, with ${range}.`;
}

function degrees(value: number): string {
  return `${value} ${Math.abs(value) === 1 ? 'degree' : 'degrees'}`;
}

/**
 * Weather for ~30 cities from bundled sample data. The default 2.5 s latency stands in for a remote
 * weather API, so a delegation to it takes long enough for the conversation to carry on meanwhile.
 *
 * @example
 *   await createWeather({ latencyMs: 0 }).run({ city: 'Paris', when: 'now' }, ctx);
 *   // speech: "It's 18 degrees and partly cloudy in Paris."
 */
export function createWeather(options: WeatherOptions = {}): VenusFunction<WeatherArgs> {
  const latencyMs = options.latencyMs ?? 2500;
  const sample = options.sample ?? loadBundledWeatherSample();
  const byCity = new Map(sample.cities.map((city) => [city.city, city]));
  const places = placeIndex(sample.cities.map((city) => [city.city, city.aliases] as const));
  return {
    name: 'weather',
    description:
      'Current weather (condition, temperature, humidity, wind) and a 3-day forecast for a city. Emulates a ' +
      'remote weather API over bundled sample data, so it answers after a few seconds.',
    parameters: WeatherArgsSchema,
    examples: [
      "what's the weather in Paris",
      'is it raining in London',
      'how hot is it in Dubai',
      'weather forecast for Tokyo tomorrow',
      'do I need an umbrella in Seattle',
      "what's the outlook for Sydney this week",
    ],
    keywords: [
      'sunny',
      'cloudy',
      'snow',
      'windy',
      'wind',
      'humidity',
      'humid',
      'cold',
      'warm',
      'chilly',
      'jacket',
      'coat',
      'storm',
    ],
    extract(query) {
      const normalized = normalizePlace(query);
      const when = /\btomorrow\b/.test(normalized)
        ? 'tomorrow'
        : /\b(?:forecast|outlook|week|next (?:few|three|3) days|coming days)\b/.test(normalized)
          ? 'outlook'
          : 'now';
      if (!WEATHER_WORDS.test(normalized)) return null;
      const city = findKnownPlace(query, places) ?? trailingPlace(query);
      return city === null ? null : { city, when };
    },
    async run({ city, when }, ctx) {
      ctx.progress(`Checking the weather service for ${city}`);
      await abortableSleep(latencyMs, ctx.signal);
      const canonical = findKnownPlace(city, places);
      const found = canonical === null ? undefined : byCity.get(canonical);
      if (found === undefined) throw new VenusError('function_failed', `I don't have weather for ${city}`);
      const speech =
        when === 'tomorrow'
          ? describeTomorrow(found)
          : when === 'outlook'
            ? describeOutlook(found)
            : describeCurrent(found);
      return {
        data: { source: 'bundled sample data', city: found.city, country: found.country, when, ...pick(found, when) },
        speech,
      };
    },
  };
}

function pick(city: CityWeather, when: WeatherArgs['when']): Record<string, unknown> {
  if (when === 'now') return { current: city.current, outlook: city.outlook };
  if (when === 'tomorrow') return { tomorrow: city.outlook[0] };
  return { outlook: city.outlook };
}
