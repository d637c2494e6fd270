import { readFileSync } from 'node:fs';
import { z } from 'zod';

const DaySchema = z.object({
  dayOffset: z.number().int().positive(),
  condition: z.string().min(1),
  highC: z.number(),
  lowC: z.number(),
  precipitationChancePct: z.number().min(0).max(100),
});

const CitySchema = z.object({
  city: z.string().min(1),
  country: z.string().min(1),
  aliases: z.array(z.string()),
  current: z.object({
    condition: z.string().min(1),
    temperatureC: z.number(),
    humidityPct: z.number().min(0).max(100),
    windKph: z.number().nonnegative(),
    windDirection: z.string(),
  }),
  outlook: z.array(DaySchema).min(1),
});

export const WeatherSampleSchema = z.object({ description: z.string(), cities: z.array(CitySchema).min(1) });
export type WeatherSample = z.infer<typeof WeatherSampleSchema>;
export type CityWeather = z.infer<typeof CitySchema>;

const SAMPLE_URL = new URL('../../data/weather-sample.json', import.meta.url);
let bundled: WeatherSample | undefined;

/** The bundled, project-made sample (read once: the router needs the city names synchronously). */
export function loadBundledWeatherSample(): WeatherSample {
  bundled ??= WeatherSampleSchema.parse(JSON.parse(readFileSync(SAMPLE_URL, 'utf8')));
  return bundled;
}
