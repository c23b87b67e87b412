// Where the service's own requests may go: HttpRequest tasks and `<response-from-url>` share one
// policy, made of `serve --allow-task-host` (host-allowlist.ts) and `--deny-private-addresses`.
//
// --deny-private-addresses refuses loopback, private (RFC 1918, unique-local), link-local (cloud
// metadata at 169.254.169.254 included) and unspecified addresses. It is checked on the address
// a connection would go to: an address written in the URL before the request (Node connects to
// it without a lookup), and for a name, on the addresses DNS gives, in the lookup the socket
// itself uses, for every connection and every redirect hop. So a name that resolves to an
// internal address (DNS rebinding) is refused, and a refused address never sees a connection.
// An --allow-task-host entry that is an address or a CIDR range lets its addresses through.

import { BlockList, isIP } from 'node:net';
import dns from 'node:dns';
import type { Options, OptionsInit } from 'got';
import { addressAllowed, hostOf, hostRefusal, HostNotAllowedError, type HostAllowlist } from './host-allowlist.js';

export interface OutboundPolicy {
  /** --allow-task-host; null: any host. */
  readonly allowedHosts: HostAllowlist | null;
  /** --deny-private-addresses. */
  readonly denyPrivateAddresses: boolean;
}

export const OPEN_POLICY: OutboundPolicy = { allowedHosts: null, denyPrivateAddresses: false };

const RANGES: readonly (readonly [string, BlockList])[] = [
  [
    'loopback',
    list([
      ['127.0.0.0', 8, 'ipv4'],
      ['::1', 128, 'ipv6'],
    ]),
  ],
  [
    'private',
    list([
      ['10.0.0.0', 8, 'ipv4'],
      ['172.16.0.0', 12, 'ipv4'],
      ['192.168.0.0', 16, 'ipv4'],
      ['fc00::', 7, 'ipv6'],
    ]),
  ],
  [
    'link-local',
    list([
      ['169.254.0.0', 16, 'ipv4'],
      ['fe80::', 10, 'ipv6'],
    ]),
  ],
  [
    'unspecified',
    list([
      ['0.0.0.0', 8, 'ipv4'],
      ['::', 128, 'ipv6'],
    ]),
  ],
];

function list(subnets: readonly (readonly [string, number, 'ipv4' | 'ipv6'])[]): BlockList {
  const blocks = new BlockList();
  for (const [network, prefix, family] of subnets) blocks.addSubnet(network, prefix, family);
  return blocks;
}

/** "loopback", "private", … for an address --deny-private-addresses refuses; null for one it lets through. IPv4-mapped IPv6 counts as its IPv4 address. */
export function privateRange(address: string): string | null {
  const family = isIP(address);
  if (family === 0) return null;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const [name, blocks] of RANGES) if (blocks.check(address, type)) return name;
  return null;
}

/** Why the policy refuses to connect to `address` for `host`; null when it may. */
export function addressRefusal(policy: OutboundPolicy, host: string, address: string): string | null {
  if (!policy.denyPrivateAddresses) return null;
  const range = privateRange(address);
  if (range === null) return null;
  if (policy.allowedHosts !== null && addressAllowed(policy.allowedHosts, address)) return null;
  const named = host === address ? `the address ${address}` : `the host "${host}" resolves to ${address}`;
  return `${named}, a ${range} address: --deny-private-addresses refuses it (an --allow-task-host entry with this address or its range would let it through)`;
}

/** Why the URL may not be requested, before any connection or lookup; null when it may (a name's addresses are checked when it is resolved). */
export function urlRefusal(policy: OutboundPolicy, url: URL): string | null {
  if (policy.allowedHosts !== null) {
    const refusal = hostRefusal(policy.allowedHosts, url);
    if (refusal !== null) return refusal;
  }
  const host = hostOf(url);
  return isIP(host) === 0 ? null : addressRefusal(policy, host, host);
}

/** A connection refused by --deny-private-addresses, raised from the lookup before it connects. */
export class AddressNotAllowedError extends Error {
  override readonly name = 'AddressNotAllowedError';
  readonly code = 'ERR_ADDRESS_NOT_ALLOWED';
}

type LookupAddress = { address: string; family: number };
type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
type LookupFunction = (hostname: string, options: dns.LookupOptions, callback: LookupCallback) => void;

/**
 * A `lookup` for net.connect (got's dnsLookup) that resolves as Node does and keeps only the
 * addresses the policy allows; none left: the connection fails with AddressNotAllowedError,
 * naming the host and the addresses, before it is made.
 */
export function guardedLookup(policy: OutboundPolicy): LookupFunction {
  return (hostname, options, callback) => {
    const wantsAll = typeof options === 'object' && options !== null && options.all === true;
    const lookupOptions: dns.LookupAllOptions = { ...(typeof options === 'object' && options !== null ? options : {}), all: true };
    dns.lookup(hostname, lookupOptions, (error, addresses) => {
      if (error !== null) {
        callback(error, wantsAll ? [] : '');
        return;
      }
      const usable = addresses.filter((a) => addressRefusal(policy, hostname, a.address) === null);
      if (usable.length === 0) {
        const first = addresses[0];
        const reason = first === undefined ? `the host "${hostname}" has no address` : addressRefusal(policy, hostname, first.address)!;
        const others =
          addresses.length > 1
            ? ` (and ${addresses
                .slice(1)
                .map((a) => a.address)
                .join(', ')})`
            : '';
        callback(new AddressNotAllowedError(reason + others), wantsAll ? [] : '');
        return;
      }
      if (wantsAll) callback(null, usable);
      else callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
}

/**
 * What got needs to keep a request and its redirects within the policy: the lookup, and a
 * beforeRedirect hook that checks each next URL (its host against the list, an address in it
 * against the ranges). Empty for the open policy.
 */
export function gotGuards(policy: OutboundPolicy): Pick<OptionsInit, 'dnsLookup' | 'hooks'> {
  if (policy.allowedHosts === null && !policy.denyPrivateAddresses) return {};
  const checkRedirect = (next: Pick<Options, 'url'>) => {
    const refusal = urlRefusal(policy, new URL(String(next.url)));
    if (refusal !== null) throw new HostNotAllowedError(`redirect refused: ${refusal}`);
  };
  return {
    ...(policy.denyPrivateAddresses ? { dnsLookup: guardedLookup(policy) } : {}),
    hooks: { beforeRedirect: [checkRedirect] },
  };
}

/**
 * A task's request carries what the author wrote for the origin of its URL: headers such as an
 * API key and a body with the visitor's data. got drops only Authorization, Cookie and Host when
 * a redirect leaves that origin, and keeps a POST and its body on 301, 302, 307 and 308, so a
 * redirect to another origin would hand both to a server the author never named. Such a
 * redirect is followed only to a host --allow-task-host names (the operator's list of hosts
 * trusted with what tasks send); without the list, never. Null when `to` may be followed.
 */
export function crossOriginRefusal(policy: OutboundPolicy, from: URL, to: URL): string | null {
  if (from.origin === to.origin) return null;
  if (policy.allowedHosts !== null && hostRefusal(policy.allowedHosts, to) === null) return null;
  return `redirect refused: from ${from.origin} to another origin, ${to.origin}, which would receive the task's headers and body (scheme, host or port differ; an --allow-task-host entry naming "${hostOf(to)}" lets it be followed)`;
}

/** Thrown from got's beforeRedirect hook: a redirect to another origin that may not be followed. */
export class CrossOriginRedirectError extends Error {
  override readonly name = 'CrossOriginRedirectError';
  readonly code = 'ERR_CROSS_ORIGIN_REDIRECT';
}

/** The CrossOriginRedirectError behind an error of got, if that is what it is. */
export function crossOriginRedirectOf(error: unknown): CrossOriginRedirectError | null {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if (e instanceof CrossOriginRedirectError) return e;
  }
  return null;
}

/** Whether an error of got (or its cause) is a refusal of the policy rather than a failure of the peer. */
export function isPolicyRefusal(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if (e instanceof HostNotAllowedError || e instanceof AddressNotAllowedError) return true;
    if ((e as NodeJS.ErrnoException).code === 'ERR_ADDRESS_NOT_ALLOWED') return true;
  }
  return false;
}
