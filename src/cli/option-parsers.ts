// The value parsers of every command's options, and the usage error of a value that only the
// whole command can judge. A parser throws commander's InvalidArgumentError, so a bad value is a
// usage error (exit 2) that names the option, before anything starts.

import { existsSync, statSync } from 'node:fs';
import { InvalidArgumentError, type Command } from 'commander';
import { compileTrust, type TrustProxy } from '../server/client-ip.js';
import type { PublicUrl } from '../server/options.js';
import { ageExpectation, durationExpectation, parseAge, parseDuration, parseSize } from '../units.js';

/** Ends the command with a usage error (exit 2): for what a single option's parser cannot see. */
export type Usage = (message: string) => never;

export function usageOf(command: Command): Usage {
  return (message) => command.error(`error: ${message}`, { exitCode: 2, code: 'endpoint-service.usage' });
}

export function portNumber(text: string): number {
  if (!/^\d+$/.test(text) || Number(text) > 65535) throw new InvalidArgumentError('expected a port number from 0 to 65535 (0 picks a free port).');
  return Number(text);
}

/** A whole number from 1 to `max`; `what` names it ("a number of jobs"). */
export function count(what: string, max: number): (text: string) => number {
  return (text) => {
    if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > max) throw new InvalidArgumentError(`expected ${what} from 1 to ${max}.`);
    return Number(text);
  };
}

/** A whole number from 1, with no upper bound. */
export function positiveNumber(text: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1) throw new InvalidArgumentError('expected a positive number.');
  return Number(text);
}

/** A whole number from 0 (`validate --max-warnings`). */
export function warningCount(text: string): number {
  if (!/^\d+$/.test(text)) throw new InvalidArgumentError('expected a whole number of warnings (0 or more).');
  return Number(text);
}

export function duration(text: string): number {
  const ms = parseDuration(text);
  if (ms === null) throw new InvalidArgumentError(`expected ${durationExpectation(text)}.`);
  return ms;
}

/** Days allowed, and longer than any timer: a retention is an age in the store, not a wait. */
export function age(text: string): number {
  const ms = parseAge(text);
  if (ms === null) throw new InvalidArgumentError(`expected ${ageExpectation(text)}.`);
  return ms;
}

export function size(text: string): number {
  const bytes = parseSize(text);
  if (bytes === null) throw new InvalidArgumentError('expected a positive number of bytes, optionally with a unit such as 512k or 10MiB.');
  return bytes;
}

export function oneOf<T extends string>(...values: T[]): (text: string) => T {
  return (text) => {
    if (!(values as string[]).includes(text)) throw new InvalidArgumentError(`expected ${values.map((v) => `"${v}"`).join(' or ')}.`);
    return text as T;
  };
}

/** A repeatable option: every value given, in order. */
export function repeated(value: string, previous: readonly string[] = []): string[] {
  return [...previous, value];
}

/** `--param name=value`, repeatable: everything after the first "=" is the value. */
export function nameValue(value: string, previous: [string, string][] | undefined): [string, string][] {
  const eq = value.indexOf('=');
  if (eq <= 0) throw new InvalidArgumentError(`expected name=value, got "${value}"`);
  return [...(previous ?? []), [value.slice(0, eq), value.slice(eq + 1)]];
}

/** RFC 9110 field-name, as the compiler checks a parameter's `header`. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** dry-run's `--header "Name: value"`, repeatable. */
export function collectHeader(text: string, previous: [string, string][] | undefined): [string, string][] {
  const colon = text.indexOf(':');
  const name = colon < 0 ? '' : text.slice(0, colon).trim();
  if (!HEADER_NAME.test(name)) throw new InvalidArgumentError(`expected "Name: value" with a header name such as X-GitHub-Event, got "${text}"`);
  // As node:http hands a value over: without the blanks around it.
  return [...(previous ?? []), [name, text.slice(colon + 1).trim()]];
}

export function queueName(text: string): string {
  if (!/^[A-Za-z0-9_.-]{1,100}$/.test(text)) throw new InvalidArgumentError('expected letters, digits, ".", "_" or "-" (no ":").');
  return text;
}

/**
 * --cors takes a value, so `serve --cors endpoints.xml` reads the file name as the origins and
 * then misses the file; an unquoted `--cors *` is expanded by the shell into file names. Either
 * way the value is a path that exists, which no list of origins is: say so.
 */
export function corsOrigins(text: string): string {
  if (text !== '' && existsSync(text)) {
    throw new InvalidArgumentError(
      `"${text}" is a ${statSync(text).isDirectory() ? 'folder' : 'file'}, not a list of origins. Give the origins right after --cors (such as --cors https://app.example, or --cors '*' in quotes so the shell does not expand it), and the endpoints.xml last.`,
    );
  }
  return text;
}

/** --trust-proxy: a number of hops (1 for one load balancer), or addresses and CIDR ranges. */
export function trustProxy(text: string): TrustProxy {
  const value = text.trim();
  const trust: TrustProxy = /^\d+$/.test(value)
    ? { hops: Number(value) }
    : {
        addresses: value
          .split(',')
          .map((a) => a.trim())
          .filter((a) => a !== ''),
      };
  if ('hops' in trust ? trust.hops < 1 || trust.hops > 64 : trust.addresses.length === 0) {
    throw new InvalidArgumentError(
      'expected a number of proxy hops from 1 to 64, or addresses and CIDR ranges such as 10.0.0.0/8,127.0.0.1 (or loopback, linklocal, uniquelocal).',
    );
  }
  try {
    compileTrust(trust);
  } catch (error) {
    throw new InvalidArgumentError(`${(error as Error).message}; expected a number of proxy hops, or addresses and CIDR ranges such as 10.0.0.0/8,127.0.0.1.`);
  }
  return trust;
}

/** --rate-limit-store: a Redis URL, checked without echoing it (it may hold a password). */
export function redisUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new InvalidArgumentError('expected a Redis URL such as redis://127.0.0.1:6379 (or rediss:// for TLS).');
  }
  if ((url.protocol !== 'redis:' && url.protocol !== 'rediss:') || url.hostname === '') {
    throw new InvalidArgumentError('expected a Redis URL such as redis://127.0.0.1:6379 (or rediss:// for TLS).');
  }
  return text.trim();
}

/**
 * --public-url: the URL clients reach the service at, for ${base-url} and the same-origin
 * exception of --cors. Only what a browser's address bar would show for the service's root.
 */
export function publicUrl(text: string): PublicUrl {
  const expected =
    'expected the absolute http:// or https:// URL clients reach the service at, such as https://forms.example, without user, query or fragment.';
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new InvalidArgumentError(expected);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') throw new InvalidArgumentError(expected);
  // Checked on the text too: new URL drops an empty "?" or "#".
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '' || /[?#]/.test(text)) throw new InvalidArgumentError(expected);
  return { origin: url.origin, base: url.origin + url.pathname.replace(/\/+$/, '') };
}
