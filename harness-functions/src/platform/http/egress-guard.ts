import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';

/** Addresses an HTTP function may not resolve to unless the operator allows private networks. */
const PRIVATE = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata services
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  PRIVATE.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
  ['64:ff9b::', 96], // NAT64: an IPv4 address in disguise
] as const) {
  PRIVATE.addSubnet(net, bits, 'ipv6');
}

/** Whether an IP address is private, loopback, link-local or otherwise not on the public internet. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return PRIVATE.check(address, 'ipv4');
  if (family !== 6) return true;
  // IPv4-mapped IPv6 (::ffff:10.0.0.1) is the IPv4 address.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return PRIVATE.check(mapped[1]!, 'ipv4');
  return PRIVATE.check(address, 'ipv6');
}

/** Why a request was not made: the host is, or resolves to, a private address. */
export class EgressRefusedError extends Error {
  readonly code = 'EGRESS_REFUSED';
}

/** The egress refusal somewhere in an error's cause chain (fetch wraps it in a TypeError, undici in more). */
export function egressRefusal(error: unknown): EgressRefusedError | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if (e instanceof EgressRefusedError) return e;
  }
  return undefined;
}

/** dns.lookup that refuses names resolving to any private address (the connector's hook). */
const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, '', 0);
    const refused = addresses.find((a) => isPrivateAddress(a.address));
    if (refused !== undefined) {
      const reason = new EgressRefusedError(`${hostname} resolves to ${refused.address}, a private address`);
      return callback(reason as NodeJS.ErrnoException, '', 0);
    }
    if (options.all === true) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    const first = addresses[0]!;
    return callback(null, first.address, first.family);
  });
};

/**
 * `fetch` for tenants' HTTP functions that only connects to public addresses. The check runs on the
 * addresses the connection actually uses (a DNS lookup hook in the connector), so a name that
 * resolves to a public address when registered and a private one later (DNS rebinding) is still
 * refused; literal IP hosts are checked before anything is sent. Refusals reject with a TypeError
 * whose `cause` is an EgressRefusedError.
 *
 * @example
 *   const fetchPublic = publicOnlyFetch();
 *   await fetchPublic('http://169.254.169.254/latest/meta-data/'); // rejects: EGRESS_REFUSED
 */
export function publicOnlyFetch(): typeof fetch {
  const agent = new Agent({
    connect: {
      lookup: guardedLookup,
    },
  });
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : input);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) !== 0 && isPrivateAddress(host)) {
      throw new TypeError('fetch failed', { cause: new EgressRefusedError(`${host} is a private address`) });
    }
    return undiciFetch(url, { ...(init as object), dispatcher: agent } as Parameters<typeof undiciFetch>[1]);
  }) as unknown as typeof fetch;
}

/**
 * The one egress connector of the functions platform: HTTP functions and module functions' `fetch`
 * both use it, so a private-address refusal cannot be missing on one path. `allowPrivateNetworks`
 * is the operator's VENUS_FUNCTIONS_ALLOW_PRIVATE=1.
 */
export function egressFetch(options: { allowPrivateNetworks?: boolean } = {}): typeof fetch {
  return options.allowPrivateNetworks === true ? globalThis.fetch : publicOnlyFetch();
}
