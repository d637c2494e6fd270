import type { VenusFunction } from '../function-definition.ts';
import { createCalculator } from './calculator.ts';
import type { BuiltinOptions } from './latency.ts';
import { createWeather, type WeatherOptions } from './weather.ts';
import { createWorldClock, type WorldClockOptions } from './world-clock.ts';

export interface BuiltinFunctionsOptions {
  /** Overrides every built-in's own default latency (0 in tests, larger for demos). */
  latencyMs?: number;
  /** Clock for world_clock. */
  now?: () => number;
  worldClock?: WorldClockOptions;
  calculator?: BuiltinOptions;
  weather?: WeatherOptions;
}

/**
 * The three built-ins: world_clock, calculator and weather.
 *
 * @example
 *   const registry = new FunctionRegistry(createBuiltinFunctions({ latencyMs: 50 }));
 */
export function createBuiltinFunctions(options: BuiltinFunctionsOptions = {}): VenusFunction[] {
  const shared = options.latencyMs === undefined ? {} : { latencyMs: options.latencyMs };
  const clock = options.now === undefined ? {} : { now: options.now };
  return [
    createWorldClock({ ...shared, ...clock, ...options.worldClock }),
    createCalculator({ ...shared, ...options.calculator }),
    createWeather({ ...shared, ...options.weather }),
  ] as VenusFunction[];
}
