import { VenusError } from '@venus/protocol';
import { z } from 'zod';
import { abortableSleep } from '../abortable.ts';
import type { VenusFunction } from '../function-definition.ts';
import type { BuiltinOptions } from './latency.ts';
import { findKnownPlace, normalizePlace, placeIndex, trailingPlace } from './place-match.ts';

/**
 * Major cities and their IANA time zones; aliases (after `|`) are what people say. One line per
 * city, `City = Zone | alias, alias`, read once at load.
 */
const CITY_ZONES: readonly (readonly [city: string, zone: string, aliases: readonly string[]])[] = `
Tokyo = Asia/Tokyo
Osaka = Asia/Tokyo
Seoul = Asia/Seoul
Beijing = Asia/Shanghai | peking
Shanghai = Asia/Shanghai
Hong Kong = Asia/Hong_Kong
Taipei = Asia/Taipei
Singapore = Asia/Singapore
Bangkok = Asia/Bangkok
Jakarta = Asia/Jakarta
Manila = Asia/Manila
Mumbai = Asia/Kolkata | bombay
Delhi = Asia/Kolkata | new delhi
Bangalore = Asia/Kolkata | bengaluru
Dubai = Asia/Dubai
Istanbul = Europe/Istanbul
Moscow = Europe/Moscow
Tel Aviv = Asia/Jerusalem
Cairo = Africa/Cairo
Lagos = Africa/Lagos
Nairobi = Africa/Nairobi
Johannesburg = Africa/Johannesburg | joburg
London = Europe/London
Dublin = Europe/Dublin
Lisbon = Europe/Lisbon
Paris = Europe/Paris
Madrid = Europe/Madrid
Rome = Europe/Rome
Berlin = Europe/Berlin
Amsterdam = Europe/Amsterdam
Stockholm = Europe/Stockholm
Athens = Europe/Athens
New York = America/New_York | nyc, new york city, manhattan
Toronto = America/Toronto
Chicago = America/Chicago
Denver = America/Denver
Los Angeles = America/Los_Angeles
San Francisco = America/Los_Angeles | sf, san fran
Seattle = America/Los_Angeles
Vancouver = America/Vancouver
Mexico City = America/Mexico_City
Sao Paulo = America/Sao_Paulo
Buenos Aires = America/Argentina/Buenos_Aires
Sydney = Australia/Sydney
Melbourne = Australia/Melbourne
Auckland = Pacific/Auckland
Honolulu = Pacific/Honolulu | hawaii
`
  .trim()
  .split('\n')
  .map((line) => {
    const [names = '', aliases = ''] = line.split('|');
    const [city = '', zone = ''] = names.split('=').map((part) => part.trim());
    return [
      city,
      zone,
      aliases
        .split(',')
        .map((a) => a.trim())
        .filter((a) => a !== ''),
    ] as const;
  });

const ZONES = new Map(CITY_ZONES.map(([city, zone]) => [city, zone]));
const PLACES = placeIndex(CITY_ZONES.map(([city, , aliases]) => [city, aliases] as const));
/** Without one of these a city name alone ("book a flight to Paris") is no request for the time. */
const TIME_WORDS = /\b(?:time|times|clock|hour|o ?clock|timezone|date|day|late|early)\b/;
const DATE_WORDS = /\b(?:date|day)\b/;

export const WorldClockArgsSchema = z.object({
  city: z.string().trim().min(1).max(80).describe('A city name, e.g. "Tokyo" or "New York"'),
  ask: z.enum(['time', 'date']).default('time').describe('Whether to speak the time or the date'),
});
export type WorldClockArgs = z.infer<typeof WorldClockArgsSchema>;

export interface WorldClockOptions extends BuiltinOptions {
  /** Clock to read; tests pin it. */
  now?: () => number;
}

/**
 * Current local time in one of ~45 major cities, from the IANA time zone database built into `Intl`.
 *
 * @example
 *   await createWorldClock({ latencyMs: 0 }).run({ city: 'Tokyo' }, ctx); // speech: "It's 3:42 PM in Tokyo."
 */
export function createWorldClock(options: WorldClockOptions = {}): VenusFunction<WorldClockArgs> {
  const latencyMs = options.latencyMs ?? 300;
  const now = options.now ?? Date.now;
  return {
    name: 'world_clock',
    description: 'Current local time and date in a major city of the world, with its time zone.',
    parameters: WorldClockArgsSchema,
    examples: [
      'what time is it in Tokyo',
      "what's the local time in London right now",
      'current time in New York',
      'what day is it in Sydney',
      'what hour is it in Paris',
    ],
    keywords: ['clock', 'timezone', 'zone', 'oclock', 'date', 'hour', 'late', 'early', 'morning', 'night'],
    extract(query) {
      const normalized = normalizePlace(query);
      if (!TIME_WORDS.test(normalized)) return null;
      const ask = DATE_WORDS.test(normalized) && !/\btime\b/.test(normalized) ? 'date' : 'time';
      const city = findKnownPlace(query, PLACES) ?? trailingPlace(query);
      return city === null ? null : { city, ask };
    },
    async run({ city, ask }, ctx) {
      await abortableSleep(latencyMs, ctx.signal);
      const canonical = findKnownPlace(city, PLACES);
      const timeZone = canonical === null ? undefined : ZONES.get(canonical);
      if (canonical === null || timeZone === undefined) {
        throw new VenusError('function_failed', `I don't know the time zone for ${city}`);
      }
      const at = new Date(now());
      // ICU puts a narrow no-break space before AM/PM; speech engines read a plain space best.
      const time = new Intl.DateTimeFormat('en-US', { timeZone, hour: 'numeric', minute: '2-digit' })
        .format(at)
        .replace(/\s/gu, ' ');
      const date = new Intl.DateTimeFormat('en-US', {
        timeZone,
        weekday: 'long',
        month: 'long',
        day: 'numeric',
      }).format(at);
      const offset =
        new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' })
          .formatToParts(at)
          .find((part) => part.type === 'timeZoneName')?.value ?? 'GMT';
      return {
        data: { city: canonical, timeZone, time, date, utcOffset: offset === 'GMT' ? 'GMT+00:00' : offset },
        speech: ask === 'date' ? `It's ${date} in ${canonical}, ${time} local time.` : `It's ${time} in ${canonical}.`,
      };
    },
  };
}
