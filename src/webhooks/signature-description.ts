// What a `<signature>` element compiles to (docs/language.md, "<signature>"), and what verifying a
// request against it answers. The compiler builds these with describeSignature
// (describe-signature.ts); the request path checks a delivery with verifySignatures
// (verify-signature.ts) before the environment, the hash and the parameters.
//
// One variant per scheme, each holding only what that scheme needs: a scheme that fixes its
// header has no header field, one that signs no timestamp has no tolerance, so a description
// that mixes them cannot be built. Keys are KeyObjects, not strings or Buffers: a KeyObject
// prints as `SecretKeyObject { type: 'secret' }`, so a description that reaches a log or a
// plan by mistake does not carry the secret with it.

import type { KeyObject } from 'node:crypto';

export const SIGNATURE_SCHEMES = ['github', 'stripe', 'slack', 'shopify', 'standard', 'hmac', 'token'] as const;
export type SignatureScheme = (typeof SIGNATURE_SCHEMES)[number];

export const HMAC_ALGORITHMS = ['sha256', 'sha1', 'sha512'] as const;
export type HmacAlgorithm = (typeof HMAC_ALGORITHMS)[number];

export const DIGEST_ENCODINGS = ['hex', 'base64'] as const;
export type DigestEncoding = (typeof DIGEST_ENCODINGS)[number];

/** How far a signed timestamp may be from the server's clock, either way, unless `tolerance` says otherwise. */
export const DEFAULT_TOLERANCE_MS = 5 * 60_000;

/** A header as configured: the name as written, for messages, and its lower-case key, for lookup. */
export interface HeaderName {
  readonly name: string;
  readonly key: string;
}

export interface GithubSignature {
  readonly scheme: 'github';
  readonly key: KeyObject;
}
export interface StripeSignature {
  readonly scheme: 'stripe';
  readonly key: KeyObject;
  readonly toleranceMs: number;
}
export interface SlackSignature {
  readonly scheme: 'slack';
  readonly key: KeyObject;
  readonly toleranceMs: number;
}
export interface ShopifySignature {
  readonly scheme: 'shopify';
  readonly key: KeyObject;
}
/** Standard Webhooks, under its own header names or Svix's: the key is the decoded `whsec_` secret. */
export interface StandardSignature {
  readonly scheme: 'standard';
  readonly key: KeyObject;
  readonly toleranceMs: number;
}
export interface HmacSignature {
  readonly scheme: 'hmac';
  readonly key: KeyObject;
  readonly header: HeaderName;
  /** Text before the digest, such as `sha256=`; empty when the header holds the digest alone. */
  readonly prefix: string;
  readonly algorithm: HmacAlgorithm;
  readonly encoding: DigestEncoding;
}
/**
 * A shared token sent as it is (GitLab's `X-Gitlab-Token`). Only its SHA-256 is kept: the
 * request's value is hashed the same way and the digests compared, so the comparison takes the
 * same time whatever the length of either.
 */
export interface TokenSignature {
  readonly scheme: 'token';
  readonly header: HeaderName;
  readonly tokenDigest: Buffer;
}

export type SignatureDescription = GithubSignature | StripeSignature | SlackSignature | ShopifySignature | StandardSignature | HmacSignature | TokenSignature;

/** A request's headers: lower-case name to every value received (node:http's `headersDistinct`). */
export type RequestHeaders = Readonly<Record<string, readonly string[] | undefined>>;

/**
 * Why a delivery is refused: also the `reason` label of endpoint_service_webhook_refusals_total
 * and the reason in the log line. The order matters: when every signature fails, the reason
 * reported is the one that got furthest (see verifySignatures).
 */
export const REFUSAL_REASONS = ['missing-header', 'malformed-header', 'no-match', 'timestamp-outside-tolerance'] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

/**
 * `detail` is the sentence of the 401's problem+json and of the log line: it names headers and
 * limits, never a header's value or a secret, so a refusal teaches a forger nothing and a log
 * leaks nothing.
 */
export type VerificationResult = { readonly ok: true } | { readonly ok: false; readonly reason: RefusalReason; readonly detail: string };
