import { readFileSync } from 'node:fs';
import { type SessionConfig, SessionConfigSchema, VenusError } from '@venus/protocol';
import { z } from 'zod';
import { header, type SipRequest, uriUser } from '../sip/message.ts';
import { MaxCallMsSchema, OutboundSchema } from './outbound-config.ts';

/**
 * Which tenant and assistant answer a call (docs/telephony-sip.md has an example file). A route
 * matches the dialled number (the Request-URI user part; `*` matches any) and, optionally, SIP
 * headers (name: exact value, case-insensitive name); the first match wins. A route naming a
 * `trunk` requires digest authentication with that trunk's credentials.
 */
const TrunkSchema = z.object({
  name: z.string().min(1).max(64),
  username: z.string().min(1).max(128),
  password: z.string().min(1).max(256),
});

const RouteSchema = z.object({
  number: z.string().min(1).max(64),
  headers: z.record(z.string().min(1).max(64), z.string().max(256)).optional(),
  tenant: z.string().min(1).max(64),
  trunk: z.string().min(1).max(64).optional(),
  /** How long the call rings (180) before it is answered. Default 0. */
  ringMs: z.number().int().nonnegative().max(120_000).default(0),
  /** The bridge hangs up (BYE) after this long; unset: the call lasts until either side ends it. */
  maxCallMs: MaxCallMsSchema,
  assistant: SessionConfigSchema.default({ chunkMs: 160, deliveryPolicy: 'when_idle', voice: 'en-us' }),
});

export const RoutingConfigSchema = z
  .object({
    /** The digest realm of the challenges (default "venus"). */
    realm: z.string().min(1).max(128).default('venus'),
    trunks: z.array(TrunkSchema).max(1000).default([]),
    routes: z.array(RouteSchema).min(1).max(10_000),
    /** Outbound calls and REFER transfers (outbound-config.ts); absent: the bridge places none. */
    outbound: OutboundSchema.optional(),
  })
  .superRefine((config, ctx) => {
    const names = new Set(config.trunks.map((t) => t.name));
    config.routes.forEach((route, i) => {
      if (route.trunk !== undefined && !names.has(route.trunk)) {
        ctx.addIssue({ code: 'custom', path: ['routes', i, 'trunk'], message: `no trunk named "${route.trunk}"` });
      }
    });
  });

export type RoutingConfig = z.infer<typeof RoutingConfigSchema>;
export type Trunk = z.infer<typeof TrunkSchema>;

export interface Route {
  tenant: string;
  assistant: SessionConfig;
  trunk: Trunk | undefined;
  number: string;
  ringMs: number;
  maxCallMs: number | undefined;
}

export function parseRoutingConfig(value: unknown, source = 'the SIP routing config'): RoutingConfig {
  const parsed = RoutingConfigSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new VenusError('invalid_settings', `${source}: ${issue?.path.join('.') || '(root)'}: ${issue?.message}`);
}

export function readRoutingConfig(path: string): RoutingConfig {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new VenusError(
      'invalid_settings',
      `the SIP routing config ${path} is not readable JSON: ${(error as Error).message}`,
    );
  }
  return parseRoutingConfig(json, path);
}

/** The route for a request, or undefined (the UA answers 404). */
export function routeFor(config: RoutingConfig, request: SipRequest): Route | undefined {
  const number = uriUser(request.uri);
  for (const route of config.routes) {
    if (route.number !== '*' && route.number !== number) continue;
    const headersMatch = Object.entries(route.headers ?? {}).every(([name, value]) => header(request, name) === value);
    if (!headersMatch) continue;
    const trunk = route.trunk === undefined ? undefined : config.trunks.find((t) => t.name === route.trunk);
    return {
      tenant: route.tenant,
      assistant: route.assistant,
      trunk,
      number: number ?? '',
      ringMs: route.ringMs,
      maxCallMs: route.maxCallMs,
    };
  }
  return undefined;
}
