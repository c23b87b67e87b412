// The client's address: the socket's, or with `serve --trust-proxy` the one the trusted proxies
// forwarded (X-Forwarded-For, else the `for=` of Forwarded), walked from the socket outwards
// only as far as the hops are trusted. A header sent by an untrusted peer changes nothing.

import type { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import type ProxyAddr from 'proxy-addr';

// Loaded on first use: the command line's --trust-proxy parser imports this module, so a static
// import would load proxy-addr and ipaddr.js on every start of the program, `--version` included.
let proxyAddrModule: typeof ProxyAddr | null = null;
function proxyAddr(): typeof ProxyAddr {
  proxyAddrModule ??= createRequire(import.meta.url)('proxy-addr') as typeof ProxyAddr;
  return proxyAddrModule;
}

/** --trust-proxy as given: a number of hops, or addresses and ranges (proxy-addr's names too). */
export type TrustProxy = { readonly hops: number } | { readonly addresses: readonly string[] };

export type TrustFunction = (address: string, hop: number) => boolean;

/** Throws a TypeError naming what proxy-addr could not read. */
export function compileTrust(trust: TrustProxy): TrustFunction {
  if ('hops' in trust) {
    const hops = trust.hops;
    return (_address, hop) => hop < hops;
  }
  return proxyAddr().compile([...trust.addresses]);
}

export function socketAddress(request: IncomingMessage): string {
  return unmapped(request.socket.remoteAddress ?? '');
}

/** The client's address as far as `trust` reaches. */
export function forwardedClientIp(request: IncomingMessage, trust: TrustFunction): string {
  const socket = request.socket.remoteAddress ?? '';
  let forwardedFor = request.headers['x-forwarded-for'];
  if (forwardedFor === undefined) {
    const forwarded = request.headers.forwarded;
    if (forwarded === undefined) return unmapped(socket);
    forwardedFor = forwardedForOf(forwarded);
  }
  const address = proxyAddr()({ socket: { remoteAddress: socket }, headers: { 'x-forwarded-for': forwardedFor } } as unknown as IncomingMessage, trust);
  // "unknown", an obfuscated "_node" or garbage from the proxy: not an address to key anything by.
  return isIP(address) === 0 ? unmapped(socket) : unmapped(address);
}

/** RFC 7239 `Forwarded: for=192.0.2.1, for="[2001:db8::1]:4711"` as an X-Forwarded-For list. */
function forwardedForOf(header: string): string {
  const list: string[] = [];
  for (const element of header.split(',')) {
    for (const pair of element.split(';')) {
      const eq = pair.indexOf('=');
      if (eq < 0 || pair.slice(0, eq).trim().toLowerCase() !== 'for') continue;
      let value = pair.slice(eq + 1).trim();
      if (value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
      if (value.startsWith('[')) value = value.slice(1, value.indexOf(']') < 0 ? undefined : value.indexOf(']'));
      else if (value.indexOf(':') === value.lastIndexOf(':') && value.includes(':')) value = value.slice(0, value.indexOf(':'));
      list.push(value);
    }
  }
  return list.join(', ');
}

function unmapped(address: string): string {
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}
