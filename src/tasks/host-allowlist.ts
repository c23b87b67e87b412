// `serve --allow-task-host`: the hosts HttpRequest tasks and `<response-from-url>` may call. Their
// URLs may be built from request parameters (`<url>${callback}</url>`), which would let any client
// make the service call any host it can reach (SSRF: cloud metadata, admin ports on the private
// network). With the option, a request to another host fails before any connection is made,
// redirects included. An entry may be an address or a CIDR range (`10.1.0.0/16`): it allows the
// URLs naming such an address, and is what lets a private address through
// --deny-private-addresses (outbound.ts).

import { BlockList, isIP } from 'node:net';

/** A checked, normalised list: exact hosts, and `*.example.com` for any subdomain of it. */
export interface HostAllowlist {
  readonly exact: ReadonlySet<string>;
  /** Suffixes with their leading dot: ".example.com". */
  readonly suffixes: readonly string[];
  /** The entries that are addresses or CIDR ranges; null: none. */
  readonly addresses: BlockList | null;
  /** As given, for messages. */
  readonly shown: string;
}

const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const HOST_NAME = new RegExp(`^(?:\\*\\.)?${LABEL}(?:\\.${LABEL})*$`);
const IPV6 = /^\[?[0-9a-f:.]+\]?$/;

/**
 * Parses the option's values (each may hold several, comma-separated). Returns the list, or
 * the reason a value is refused (a usage error: a scheme, a port, a path, an empty entry).
 */
export function parseHostAllowlist(values: readonly string[]): { ok: true; list: HostAllowlist } | { ok: false; error: string } {
  const exact = new Set<string>();
  const suffixes: string[] = [];
  const shown: string[] = [];
  let addresses: BlockList | null = null;
  for (const value of values) {
    for (const raw of value.split(',')) {
      const entry = raw.trim().toLowerCase().replace(/\.$/, '');
      if (entry === '') return { ok: false, error: `an empty host in "${value}"` };
      const cidr = /^\[?([0-9a-f:.]+)\]?\/(\d{1,3})$/.exec(entry);
      if (cidr !== null) {
        const family = isIP(cidr[1]!);
        const bits = Number(cidr[2]);
        if (family === 0 || bits > (family === 4 ? 32 : 128)) return { ok: false, error: `"${raw.trim()}" is not an address range (such as 10.1.0.0/16 or fd00::/8)` };
        (addresses ??= new BlockList()).addSubnet(cidr[1]!, bits, family === 4 ? 'ipv4' : 'ipv6');
      } else if (IPV6.test(entry) && entry.includes(':')) {
        const address = entry.replace(/^\[|\]$/g, '');
        if (isIP(address) !== 6) return { ok: false, error: `"${raw.trim()}" is not an IPv6 address` };
        exact.add(address);
        (addresses ??= new BlockList()).addAddress(address, 'ipv6');
      } else if (HOST_NAME.test(entry)) {
        if (entry.startsWith('*.')) suffixes.push(entry.slice(1));
        else exact.add(entry);
        if (isIP(entry) === 4) (addresses ??= new BlockList()).addAddress(entry, 'ipv4');
      } else {
        return { ok: false, error: `"${raw.trim()}" is not a host name or IP address (give only the host, such as api.example.com or *.example.com: no scheme, port or path)` };
      }
      shown.push(entry);
    }
  }
  if (shown.length === 0) return { ok: false, error: 'no host given' };
  return { ok: true, list: { exact, suffixes, addresses, shown: shown.join(', ') } };
}

/** The URL's host as compared: WHATWG-normalised (lowercase, punycode, canonical IPv4), no brackets or trailing dot. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
}

/** null when the URL's host is allowed, else the reason (names the host, for the log). */
export function hostRefusal(list: HostAllowlist, url: URL): string | null {
  const host = hostOf(url);
  if (list.exact.has(host)) return null;
  if (list.suffixes.some((suffix) => host.endsWith(suffix) && host.length > suffix.length)) return null;
  if (addressAllowed(list, host)) return null;
  return `the host "${host}" is not allowed: --allow-task-host permits only ${list.shown}`;
}

/** Whether `address` (an IP address; anything else is not) is an address entry of the list or in one of its ranges. */
export function addressAllowed(list: HostAllowlist, address: string): boolean {
  const family = isIP(address);
  return family !== 0 && list.addresses !== null && list.addresses.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** Thrown from got's beforeRedirect hook: a redirect to a host outside the list. */
export class HostNotAllowedError extends Error {
  override readonly name = 'HostNotAllowedError';
  readonly code = 'ERR_TASK_HOST_NOT_ALLOWED';
}
