// The cryptographic ground of webhook signatures: HMACs over the exact body bytes, strict
// decoding of the digests senders write, and constant-time comparison. node:crypto only.

import { createHash, createHmac, timingSafeEqual, type KeyObject } from 'node:crypto';
import type { DigestEncoding, HmacAlgorithm } from './signature-description.js';

export const DIGEST_LENGTH: Readonly<Record<HmacAlgorithm, number>> = { sha1: 20, sha256: 32, sha512: 64 };

/**
 * HMAC of `prefix` followed by `body`. The prefix (Stripe's `t.`, Slack's `v0:ts:`) is fed
 * separately rather than concatenated with the body, so a large body is never copied.
 */
export function hmac(algorithm: HmacAlgorithm, key: KeyObject, prefix: string, body: Buffer): Buffer {
  const mac = createHmac(algorithm, key);
  if (prefix.length > 0) mac.update(prefix, 'utf8');
  return mac.update(body).digest();
}

/** SHA-256 of a token, so tokens of any length compare in the same time (see sameBytes). */
export function tokenDigest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/**
 * Whether `given` equals `expected`, in time that depends only on the length of `expected`.
 * timingSafeEqual throws on a length mismatch, and returning early would tell a forger how long
 * the digest is; the expected value is compared with itself instead, so both paths do the same
 * work. (`expected` is a digest of known length, so its length is no secret either way.)
 */
export function sameBytes(expected: Buffer, given: Buffer): boolean {
  if (given.length !== expected.length) {
    timingSafeEqual(expected, expected);
    return false;
  }
  return timingSafeEqual(expected, given);
}

const HEX = /^[0-9a-fA-F]+$/;
// Standard base64 (RFC 4648 §4), padding optional: what Shopify, Standard Webhooks and Svix
// send. Buffer.from(…, 'base64') skips characters it does not know, so they are refused first:
// a header with stray characters is malformed, not a near miss.
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The digest written in `text`, when it is exactly `length` bytes in `encoding`; null otherwise. */
export function decodeDigest(text: string, encoding: DigestEncoding, length: number): Buffer | null {
  if (encoding === 'hex') {
    if (text.length !== length * 2 || !HEX.test(text)) return null;
    return Buffer.from(text, 'hex');
  }
  if (text.length > Math.ceil(length / 3) * 4 || !BASE64.test(text)) return null;
  const bytes = Buffer.from(text, 'base64');
  return bytes.length === length ? bytes : null;
}

/** A signature of `min` to `max` bytes written in `encoding` (an ECDSA signature in DER varies in length); null otherwise. */
export function decodeBetween(text: string, encoding: DigestEncoding, min: number, max: number): Buffer | null {
  if (encoding === 'hex') {
    if (text.length < min * 2 || text.length > max * 2 || text.length % 2 !== 0 || !HEX.test(text)) return null;
    return Buffer.from(text, 'hex');
  }
  if (text.length > Math.ceil(max / 3) * 4 || !BASE64.test(text)) return null;
  const bytes = Buffer.from(text, 'base64');
  return bytes.length >= min && bytes.length <= max ? bytes : null;
}

/** Base64 text to bytes, strictly (a `whsec_` key); null when it is not base64 or decodes to nothing. */
export function decodeBase64(text: string): Buffer | null {
  if (!BASE64.test(text)) return null;
  const bytes = Buffer.from(text, 'base64');
  return bytes.length > 0 ? bytes : null;
}

/**
 * The key of a Standard Webhooks (or Svix) secret: `whsec_` and base64, the key being the decoded
 * bytes. Without the prefix it is read as base64 all the same, as the standardwebhooks library
 * does. Null when what follows is not base64.
 */
export function decodeStandardSecret(secret: string): Buffer | null {
  return decodeBase64(secret.startsWith(STANDARD_SECRET_PREFIX) ? secret.slice(STANDARD_SECRET_PREFIX.length) : secret);
}

export const STANDARD_SECRET_PREFIX = 'whsec_';
