import type { VenusFunction } from '../function-definition.ts';
import { createCalculator } from './calculator.ts';
import { createCallNumber } from './call-number.ts';
import type { BuiltinOptions } from './latency.ts';
import { createNotes, type NotesOptions } from './notes.ts';
import type { SipControlOptions } from './sip-control-client.ts';
import { createTransferCall } from './transfer-call.ts';
import { createWeather, type WeatherOptions } from './weather.ts';
import { createWebFetch, type WebFetchOptions } from './web-fetch.ts';
import { createWorkStatus } from './work-status.ts';
import { createWorldClock, type WorldClockOptions } from './world-clock.ts';

export interface BuiltinFunctionsOptions {
  /** Overrides every built-in's own default latency (0 in tests, larger for demos). */
  latencyMs?: number;
  /** Clock for world_clock. */
  now?: () => number;
  worldClock?: WorldClockOptions;
  calculator?: BuiltinOptions;
  weather?: WeatherOptions;
  /** Adds web_fetch, limited to its `allowHosts`; absent by default. */
  webFetch?: WebFetchOptions;
  /** Adds notes (Redis when `redisUrl` is given, memory otherwise); absent by default. */
  notes?: NotesOptions;
  /** Adds call_number and transfer_call, through the SIP bridge's control API; absent by default. */
  sipControl?: SipControlOptions;
}

/**
 * The built-ins: world_clock, calculator, weather and work_status (answered from the request's work
 * snapshot), plus web_fetch, notes, and call_number / transfer_call when their options are given.
 *
 * @example
 *   const registry = new FunctionRegistry(createBuiltinFunctions({ latencyMs: 50 }));
 */
export function createBuiltinFunctions(options: BuiltinFunctionsOptions = {}): VenusFunction[] {
  const shared = options.latencyMs === undefined ? {} : { latencyMs: options.latencyMs };
  const clock = options.now === undefined ? {} : { now: options.now };
  const functions = [
    createWorldClock({ ...shared, ...clock, ...options.worldClock }),
    createCalculator({ ...shared, ...options.calculator }),
    createWeather({ ...shared, ...options.weather }),
    createWorkStatus(),
  ] as VenusFunction[];
  if (options.webFetch !== undefined) functions.push(createWebFetch(options.webFetch) as VenusFunction);
  if (options.notes !== undefined) functions.push(createNotes({ ...clock, ...options.notes }) as VenusFunction);
  if (options.sipControl !== undefined) {
    functions.push(
      createCallNumber(options.sipControl) as VenusFunction,
      createTransferCall(options.sipControl) as VenusFunction,
    );
  }
  return functions;
}
