// Verifying a webhook delivery against the `<signature>` elements of its endpoint
// (docs/language.md, "<signature>"): the seven schemes, over the raw body bytes, constant-time.
// Pure and synchronous: headers, body and clock in, a tagged result out; the HTTP server turns a
// refusal into a 401 problem+json, a counted metric and a log line.

import type { KeyObject } from 'node:crypto';
import { DIGEST_LENGTH, decodeDigest, hmac, sameBytes, tokenDigest } from './digest.js';
import { verifyTimestamped } from './verify-timestamped.js';
import {
  REFUSAL_REASONS,
  type DigestEncoding,
  type HeaderName,
  type HmacAlgorithm,
  type RefusalReason,
  type SignatureDescription,
  type VerificationResult,
} from './signature-description.js';
import { VERIFIED, headerName, noMatch, refuse, singleHeader, type Refusal, type SignedRequest } from './refusal.js';

/**
 * Whether any of the endpoint's signatures verifies (several are for secret rotation: the old
 * and the new secret both pass while the sender switches). When none does, the refusal reported
 * is the one that got furthest, so a delivery signed with the right key but replayed too late
 * says "timestamp outside the tolerance" rather than "no match" from the other secret.
 */
export function verifySignatures(
  signatures: readonly [SignatureDescription, ...SignatureDescription[]],
  request: SignedRequest,
  now: number | null,
): VerificationResult {
  let worst: Refusal | undefined;
  for (const signature of signatures) {
    const result = verifySignature(signature, request, now);
    if (result.ok) return VERIFIED;
    if (worst === undefined || rank(result.reason) > rank(worst.reason)) worst = result;
  }
  return worst!;
}

export const GITHUB_HEADER = headerName('X-Hub-Signature-256');
export const SHOPIFY_HEADER = headerName('X-Shopify-Hmac-Sha256');

const rank = (reason: RefusalReason) => REFUSAL_REASONS.indexOf(reason);

export function verifySignature(signature: SignatureDescription, request: SignedRequest, now: number | null): VerificationResult {
  switch (signature.scheme) {
    case 'github':
      return verifyBodyDigest(request, GITHUB_HEADER, 'sha256=', signature.key, 'sha256', 'hex');
    case 'shopify':
      return verifyBodyDigest(request, SHOPIFY_HEADER, '', signature.key, 'sha256', 'base64');
    case 'hmac':
      return verifyBodyDigest(request, signature.header, signature.prefix, signature.key, signature.algorithm, signature.encoding);
    case 'token':
      return verifyToken(request, signature.header, signature.tokenDigest);
    case 'stripe':
    case 'slack':
    case 'standard':
      return verifyTimestamped(signature, request, now);
  }
}

/** github, shopify and hmac: one digest of the body alone, in one header, after an optional prefix. */
function verifyBodyDigest(
  request: SignedRequest,
  header: HeaderName,
  prefix: string,
  key: KeyObject,
  algorithm: HmacAlgorithm,
  encoding: DigestEncoding,
): VerificationResult {
  const value = singleHeader(request.headers, header);
  if (typeof value !== 'string') return value;
  const given = value.startsWith(prefix) ? decodeDigest(value.slice(prefix.length), encoding, DIGEST_LENGTH[algorithm]) : null;
  if (given === null) {
    const expectation = `${prefix.length > 0 ? `"${prefix}" followed by ` : ''}a ${algorithm} digest in ${encoding}`;
    return refuse('malformed-header', `the ${header.name} header is not ${expectation}`);
  }
  return sameBytes(hmac(algorithm, key, '', request.body), given) ? VERIFIED : noMatch(header);
}

/** token: the header holds the shared secret itself; compared as SHA-256 digests (see TokenSignature). */
function verifyToken(request: SignedRequest, header: HeaderName, expected: Buffer): VerificationResult {
  const value = singleHeader(request.headers, header);
  if (typeof value !== 'string') return value;
  return sameBytes(expected, tokenDigest(value)) ? VERIFIED : refuse('no-match', `the ${header.name} header does not hold the configured token`);
}
