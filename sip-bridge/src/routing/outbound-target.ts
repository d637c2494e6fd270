import { lookup } from 'node:dns/promises';
import { isIPv4 } from 'node:net';
import { VenusError } from '@venus/protocol';
import type { DigestCredentials } from '../sip/digest-client.ts';
import type { SipPeer } from '../sip/transactions.ts';
import type { OutboundConfig } from './outbound-config.ts';

export interface OutboundTarget {
  /** The Request-URI (INVITE) or Refer-To (transfer). */
  uri: string;
  /** Where an INVITE goes. */
  peer: SipPeer;
  credentials: DigestCredentials | undefined;
}

const NUMBER = /^\+?[0-9*#]{1,32}$/;

/** `sip:user@host:port;params` split; undefined when it is no sip: URI the bridge can reach. */
function parseSipUri(uri: string): { host: string; port: number; transport: string } | undefined {
  const match = /^sip:(?:[^@;>]+@)?([A-Za-z0-9.-]+)(?::(\d{1,5}))?((?:;[^;?]*)*)(\?.*)?$/i.exec(uri);
  if (match === null) return undefined;
  const port = match[2] === undefined ? 5060 : Number(match[2]);
  if (port < 1 || port > 65_535) return undefined;
  const transport = /;transport=([a-z]+)/i.exec(match[3] ?? '')?.[1]?.toLowerCase() ?? 'udp';
  return { host: match[1]!, port, transport };
}

/**
 * Where a call or a transfer to `to` goes: a number (spaces, dashes, dots and brackets dropped)
 * through the outbound gateway, or a SIP URI to its host. Refused with a coded error: no outbound
 * config (`forbidden`), a target none of `allow` matches (`forbidden`), something that is neither
 * (`invalid_arguments`), a number without a gateway (`invalid_arguments`), TCP/TLS targets
 * (`unsupported_feature`: outbound calls go over UDP).
 */
export async function resolveOutboundTarget(outbound: OutboundConfig | undefined, to: string): Promise<OutboundTarget> {
  if (outbound === undefined)
    throw new VenusError('forbidden', 'outbound calls are not configured (the routing file has no "outbound")');
  const trimmed = to.trim();
  const number = trimmed.replace(/[\s().-]/g, '');
  const target = NUMBER.test(number) ? number : trimmed;
  if (!outbound.allow.some((source) => new RegExp(source).test(target)))
    throw new VenusError('forbidden', `calling ${JSON.stringify(target)} is not allowed by the outbound "allow" list`);
  let uri: string;
  let where: string;
  if (NUMBER.test(target)) {
    if (outbound.gateway === undefined)
      throw new VenusError('invalid_arguments', 'a number needs an outbound gateway (outbound.gateway)');
    const gateway = parseSipUri(outbound.gateway);
    if (gateway === undefined) throw new VenusError('invalid_settings', 'outbound.gateway is not a reachable sip: URI');
    uri = `sip:${encodeURIComponent(target).replace(/%2B/g, '+')}@${gateway.host}:${gateway.port}`;
    where = outbound.gateway;
  } else if (/^sip:/i.test(target)) {
    uri = target;
    where = target;
  } else {
    throw new VenusError('invalid_arguments', `${JSON.stringify(target)} is neither a phone number nor a sip: URI`);
  }
  const parsed = parseSipUri(where);
  if (parsed === undefined) throw new VenusError('invalid_arguments', `${JSON.stringify(where)} is not a sip: URI`);
  if (parsed.transport !== 'udp')
    throw new VenusError('unsupported_feature', 'outbound calls go over UDP only (transport=tcp/tls is not supported)');
  const address = isIPv4(parsed.host)
    ? parsed.host
    : await lookup(parsed.host, { family: 4 }).then(
        (found) => found.address,
        (error: unknown) => {
          throw new VenusError('call_failed', `cannot resolve ${parsed.host}`, { cause: error });
        },
      );
  const credentials =
    outbound.username !== undefined && outbound.password !== undefined
      ? { username: outbound.username, password: outbound.password }
      : undefined;
  return { uri, peer: { protocol: 'udp', address, port: parsed.port }, credentials };
}
