// Verifying a webhook delivery against the `<signature>` elements of its endpoint
// (docs/language.md, "<signature>"): every scheme that signs through verifyTemplate
// (verify-template.ts), `token` here; over the raw body bytes, constant-time. Pure and
// synchronous: headers, body and clock in, a tagged result out; the HTTP server turns a refusal
// into a 401 problem+json, a counted metric and a log line.

import { sameBytes, tokenDigest } from './digest.js';
import { verifyTemplate } from './verify-template.js';
import { REFUSAL_REASONS, isToken, type HeaderName, type RefusalReason, type SignatureDescription, type VerificationResult } from './signature-description.js';
import { VERIFIED, refuse, singleHeader, type Refusal, type SignedRequest } from './refusal.js';

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

const rank = (reason: RefusalReason) => REFUSAL_REASONS.indexOf(reason);

export function verifySignature(signature: SignatureDescription, request: SignedRequest, now: number | null): VerificationResult {
  if (isToken(signature)) return verifyToken(request, signature.header, signature.tokenDigest);
  return verifyTemplate(signature, request, now);
}

/** token: the header holds the shared secret itself; compared as SHA-256 digests (see TokenSignature). */
function verifyToken(request: SignedRequest, header: HeaderName, expected: Buffer): VerificationResult {
  const value = singleHeader(request.headers, header);
  if (typeof value !== 'string') return value;
  return sameBytes(expected, tokenDigest(value)) ? VERIFIED : refuse('no-match', `the ${header.name} header does not hold the configured token`);
}
