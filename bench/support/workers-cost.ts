/**
 * Cloudflare's published Durable Objects rates (Workers Paid plan), as read on
 * https://developers.cloudflare.com/durable-objects/platform/pricing/ on 2026-12-03. Prices change:
 * check the page before relying on a figure made from these.
 */
export const DURABLE_OBJECT_RATES = {
  sourceDate: '2026-12-03',
  source: 'https://developers.cloudflare.com/durable-objects/platform/pricing/',
  /** USD per million requests beyond the 1 million included each month. */
  usdPerMillionRequests: 0.15,
  /** USD per million GB-s of duration beyond the 400,000 GB-s included each month. */
  usdPerMillionGbS: 12.5,
  /** Memory every object is billed for while it is in memory, whatever it uses (128 MB). */
  billedGb: 128 / 1024,
  /** Incoming WebSocket messages are billed as requests at 20 messages to one request. */
  websocketMessagesPerRequest: 20,
} as const;

export interface WorkersSessionLoad {
  /** Messages a client sends the session a second (a 20 ms append stream: 50). */
  clientMessagesPerS: number;
  /** Relay messages the GPU worker sends the session a second (an assistant audio chunk is two). */
  relayMessagesPerS: number;
}

export interface WorkersSessionCost {
  /** Billed requests per session-minute: the upgrade once, plus client messages at 20:1. */
  requestsPerMin: number;
  /** The relay socket's incoming messages as requests at 20:1, if Cloudflare bills them (not documented). */
  relayRequestsPerMin: number;
  /** Duration per session-minute: the object stays in memory for all of it (see docs/workers.md). */
  gbSPerMin: number;
  /** USD per session-minute past the included amounts: requests + duration (relay messages left out). */
  usdPerMin: number;
  usdPerHour: number;
}

/**
 * An estimate of what one live realtime session costs on the Workers edge, past the plan's included
 * amounts: not a measurement (nothing here talks to Cloudflare). Its Durable Object cannot
 * hibernate while the session lives, because its outbound relay WebSocket to the GPU worker keeps
 * it in memory, so the whole session is billed as duration at 128 MB; the client's messages are
 * billed as requests at 20:1. The first minute also pays for the upgrade request.
 *
 * @example
 *   workersSessionCost({ clientMessagesPerS: 50, relayMessagesPerS: 100 }).usdPerHour;
 */
export function workersSessionCost(load: WorkersSessionLoad, minutes = 1): WorkersSessionCost {
  const r = DURABLE_OBJECT_RATES;
  const requestsPerMin = 1 / minutes + (load.clientMessagesPerS * 60) / r.websocketMessagesPerRequest;
  const relayRequestsPerMin = (load.relayMessagesPerS * 60) / r.websocketMessagesPerRequest;
  const gbSPerMin = 60 * r.billedGb;
  const usdPerMin = (requestsPerMin * r.usdPerMillionRequests + gbSPerMin * r.usdPerMillionGbS) / 1e6;
  return { requestsPerMin, relayRequestsPerMin, gbSPerMin, usdPerMin, usdPerHour: usdPerMin * 60 };
}
