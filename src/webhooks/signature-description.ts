// What a `<signature>` element compiles to (docs/language.md, "<signature>"), and what verifying a
// request against it answers. The compiler builds these with describeSignature
// (describe-signature.ts); the request path checks a delivery with verifySignatures
// (verify-signature.ts) before the environment, the hash and the parameters.
//
// Every scheme that signs is one TemplateSignature: the verifier, the headers, how the signature
// is written and what bytes are signed, as data (the named senders are entries of senders.ts over
// it); `token` compares a header with a shared token. Keys are KeyObjects, not strings or Buffers: a KeyObject
// prints as `SecretKeyObject { type: 'secret' }`, so a description that reaches a log or a
// plan by mistake does not carry the secret with it.

import type { KeyObject } from 'node:crypto';

import type { DigestEncoding, HmacAlgorithm, TimestampFormat } from './signature-terms.js';
import { SENDER_NAMES } from './senders.js';

export { DIGEST_ENCODINGS, HMAC_ALGORITHMS, TIMESTAMP_FORMATS } from './signature-terms.js';
export type { DigestEncoding, HmacAlgorithm, TimestampFormat } from './signature-terms.js';

/** The schemes named before the catalogue grew, first, so a list of them reads as it always has. */
const FIRST_SENDERS = ['github', 'stripe', 'slack', 'shopify', 'standard'];
/** The schemes described by their attributes rather than by a sender's name. */
export const GENERIC_SCHEMES = ['hmac', 'token', 'ed25519', 'ecdsa-p256'] as const;
/** Every `scheme` a `<signature>` may name: the generic ones and every entry of the catalogue (senders.ts). */
export const SIGNATURE_SCHEMES: readonly string[] = [...FIRST_SENDERS, ...GENERIC_SCHEMES, ...SENDER_NAMES.filter((name) => !FIRST_SENDERS.includes(name))];

/** How far a signed timestamp may be from the server's clock, either way, unless `tolerance` says otherwise. */
export const DEFAULT_TOLERANCE_MS = 5 * 60_000;

/**
 * A header as configured: the name as written, for messages, and its lower-case key, for lookup.
 * A name `json:` and a JSON pointer (RFC 6901) is a field of the JSON body instead (Mailgun signs
 * in its body): `pointer` holds its reference tokens.
 */
export interface HeaderName {
  readonly name: string;
  readonly key: string;
  readonly pointer?: readonly string[];
}

/**
 * What checks the signature: an HMAC under the shared secret, or a public key's signature
 * (Ed25519, ECDSA over P-256 with SHA-256) under the key the sender publishes.
 */
export type Verifier =
  | { readonly kind: 'hmac'; readonly algorithm: HmacAlgorithm; readonly key: KeyObject }
  | { readonly kind: 'ed25519'; readonly key: KeyObject }
  | { readonly kind: 'ecdsa-p256'; readonly key: KeyObject };

/**
 * The headers one delivery carries: the signature, and the timestamp and id when they come in
 * headers of their own. A scheme may accept several families (Standard Webhooks' `webhook-…` or
 * Svix's `svix-…`): the one whose signature header is present is read, never a mix.
 */
export interface HeaderFamily {
  readonly signature: HeaderName;
  readonly timestamp: HeaderName | null;
  readonly id: HeaderName | null;
}

/** How the signature header holds its signatures. */
export interface SignatureFormat {
  /** Text before each signature (`sha256=`, `v0=`, `v1,`); empty when there is none. */
  readonly prefix: string;
  /**
   * The field holding the signatures when the header is `key=value` fields separated by `,` or
   * `;` (Stripe's `t=…,v1=…`, Paddle's `ts=…;h1=…`): any of them may match. Null when the value
   * is the signature itself.
   */
  readonly field: string | null;
  /** What separates those fields: `,` or `;`. */
  readonly separator: ',' | ';';
  /** Space-separated entries, each prefix and signature, any of which may match (Standard Webhooks). */
  readonly list: boolean;
  readonly encoding: DigestEncoding;
}

/** One piece of what is signed, in order (docs/language.md, "<signature>": the `signed` template). */
export type SignedPart =
  | { readonly kind: 'literal'; readonly text: string }
  | { readonly kind: 'body' }
  | { readonly kind: 'timestamp' }
  | { readonly kind: 'id' }
  | { readonly kind: 'method' }
  | { readonly kind: 'url' }
  | { readonly kind: 'header'; readonly header: HeaderName }
  | { readonly kind: 'form-sorted' };

/** Where the signed timestamp is read and how it is written. */
export interface TimestampSource {
  /** The field of the signature header (`t`, `ts`); null when it has a header of its own (HeaderFamily.timestamp). */
  readonly field: string | null;
  readonly format: TimestampFormat;
}

/**
 * Every scheme that signs (the named senders and `hmac`, `ed25519`, `ecdsa-p256`): one shape, one
 * verification (verify-template.ts). `scheme` is the name as configured, for plans and messages.
 */
export interface TemplateSignature {
  readonly scheme: string;
  readonly verifier: Verifier;
  readonly families: readonly [HeaderFamily, ...HeaderFamily[]];
  readonly format: SignatureFormat;
  readonly signed: readonly SignedPart[];
  /** The `signed` template as written, for plans. */
  readonly template: string;
  /** Null when nothing timed is signed; then toleranceMs is null too. */
  readonly timestamp: TimestampSource | null;
  readonly toleranceMs: number | null;
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

export type SignatureDescription = TemplateSignature | TokenSignature;

/** `scheme` names a TemplateSignature's sender freely, so a token is told apart by what it holds. */
export function isToken(signature: SignatureDescription): signature is TokenSignature {
  return 'tokenDigest' in signature;
}

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
