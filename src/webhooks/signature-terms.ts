// The words a `<signature>` is described in (docs/language.md, "<signature>"): digests, their
// encodings and the ways a timestamp is written. Shared by the catalogue of named senders
// (senders.ts) and the descriptions it builds (signature-description.ts).

export const HMAC_ALGORITHMS = ['sha256', 'sha1', 'sha512'] as const;
export type HmacAlgorithm = (typeof HMAC_ALGORITHMS)[number];

export const DIGEST_ENCODINGS = ['hex', 'base64'] as const;
export type DigestEncoding = (typeof DIGEST_ENCODINGS)[number];

/** How a signed timestamp is written: unix seconds, unix milliseconds, or an RFC 3339 date (Twitch). */
export const TIMESTAMP_FORMATS = ['seconds', 'milliseconds', 'rfc3339'] as const;
export type TimestampFormat = (typeof TIMESTAMP_FORMATS)[number];

/** What checks a signature: an HMAC under a shared secret, or a signature under the sender's public key. */
export const VERIFIER_KINDS = ['hmac', 'ed25519', 'ecdsa-p256'] as const;
export type VerifierKind = (typeof VERIFIER_KINDS)[number];
