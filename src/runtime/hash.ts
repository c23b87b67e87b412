// Hash authentication (checked after `environment`, before parameters: docs/behaviour.md,
// "`serve`"): sha256 hex of endpoint name, the include-in-hash values as bound, the
// environment name and one secret key. Concatenated as OpenEndpoints does by default, so values
// that move a character from one to the next (`1`,`000` and `10`,`00`) share a hash; with
// join="length-prefixed" every part is written as its byte length, a colon and its bytes.

import { createHash, timingSafeEqual } from 'node:crypto';
import type { Endpoint, SecuritySettings } from '../compiler/ast.js';
import { expandTemplate, type ExpansionScope } from '../template/expand.js';

const HEX64 = /^[0-9a-fA-F]{64}$/;

/** The secret keys, expanded once when the application is loaded (they may read ${env:...}). */
export function resolveSecretKeys(security: SecuritySettings, scope: ExpansionScope): readonly Buffer[] {
  return security.secretKeys.map((key) => Buffer.from(expandTemplate(key, scope), 'utf8'));
}

/**
 * True when `sent` is a valid hash for the request. Every key is tried whatever the outcome
 * of the others, so the time taken does not tell which key (if any) came close.
 */
export function hashMatches(
  endpoint: Endpoint,
  hashedValues: readonly string[],
  environment: string,
  keys: readonly Buffer[],
  sent: string | undefined,
): boolean {
  if (sent === undefined || !HEX64.test(sent) || keys.length === 0) return false;
  const expected = Buffer.from(sent.toLowerCase(), 'latin1');
  const prefixed = endpoint.hashJoin === 'length-prefixed';
  const base = createHash('sha256');
  const add = (part: string) => {
    if (prefixed) base.update(`${Buffer.byteLength(part, 'utf8')}:`, 'latin1');
    base.update(part, 'utf8');
  };
  add(endpoint.name);
  for (const value of hashedValues) add(value);
  add(environment);
  let matched = false;
  for (let i = 0; i < keys.length; i++) {
    const hash = i === keys.length - 1 ? base : base.copy();
    const key = keys[i]!;
    if (prefixed) hash.update(`${key.length}:`, 'latin1');
    const actual = Buffer.from(hash.update(key).digest('hex'), 'latin1');
    if (timingSafeEqual(actual, expected)) matched = true;
  }
  return matched;
}
