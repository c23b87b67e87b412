// The schemes that sign a timestamp with the body (docs/language.md, "<signature>"): Stripe, Slack
// and Standard Webhooks (also under Svix's header names). The timestamp is part of the signed
// bytes, so a captured delivery cannot be replayed with a fresh one; the tolerance bounds how
// long a captured delivery stays usable, both ways, since a timestamp far ahead would otherwise
// stay "fresh" for as long as it is ahead.
//
// The signature is checked before the tolerance: "timestamp outside the tolerance" then only
// ever describes an authentic delivery (replayed, or sent by a host whose clock is off), which is
// what the person reading the log needs to know, and a forger learns nothing from either answer.

import { decodeDigest, hmac, sameBytes } from './digest.js';
import { VERIFIED, headerName, noMatch, outsideTolerance, refuse, singleHeader, type Refusal, type SignedRequest } from './refusal.js';
import type { HeaderName, SlackSignature, StandardSignature, StripeSignature, VerificationResult } from './signature-description.js';

export const STRIPE_HEADER = headerName('Stripe-Signature');
export const SLACK_SIGNATURE_HEADER = headerName('X-Slack-Signature');
export const SLACK_TIMESTAMP_HEADER = headerName('X-Slack-Request-Timestamp');

/** Standard Webhooks' header names, and Svix's: the same scheme under another prefix. */
const STANDARD_FAMILIES = ['webhook', 'svix'].map((prefix) => ({
  id: headerName(`${prefix}-id`),
  timestamp: headerName(`${prefix}-timestamp`),
  signature: headerName(`${prefix}-signature`),
}));

const SHA256_LENGTH = 32;

export function verifyTimestamped(
  signature: StripeSignature | SlackSignature | StandardSignature,
  request: SignedRequest,
  now: number | null,
): VerificationResult {
  const parsed = signature.scheme === 'stripe' ? parseStripe(request) : signature.scheme === 'slack' ? parseSlack(request) : parseStandard(request);
  if ('ok' in parsed) return parsed;
  const expected = hmac('sha256', signature.key, parsed.signedPrefix, request.body);
  if (!parsed.candidates.some((candidate) => sameBytes(expected, candidate))) return noMatch(parsed.signatureHeader);
  return outsideTolerance(parsed.seconds, now, signature.toleranceMs, parsed.timestampHeader) ?? VERIFIED;
}

/** What a timestamped scheme's headers say: the bytes signed before the body, and the signatures to compare. */
interface Parsed {
  readonly signedPrefix: string;
  readonly seconds: number;
  readonly candidates: readonly Buffer[];
  readonly signatureHeader: HeaderName;
  readonly timestampHeader: HeaderName;
}

// Unix seconds as senders write them: digits only (a sign, a fraction or an exponent would be
// read differently by the sender's own library), at most 12 of them.
const SECONDS = /^\d{1,12}$/;

/** `Stripe-Signature: t=<unix>,v1=<hex>[,v1=<hex>…]`, other entries (v0, future schemes) ignored as Stripe's SDK does. */
function parseStripe(request: SignedRequest): Parsed | Refusal {
  const value = singleHeader(request.headers, STRIPE_HEADER);
  if (typeof value !== 'string') return value;
  const timestamps: string[] = [];
  const candidates: Buffer[] = [];
  for (const item of value.split(',')) {
    const eq = item.indexOf('=');
    const [key, text] = eq < 0 ? [item, ''] : [item.slice(0, eq).trim(), item.slice(eq + 1).trim()];
    if (key === 't') timestamps.push(text);
    else if (key === 'v1') {
      const digest = decodeDigest(text, 'hex', SHA256_LENGTH);
      if (digest !== null) candidates.push(digest);
    }
  }
  const [t] = timestamps;
  if (timestamps.length !== 1 || !SECONDS.test(t!) || candidates.length === 0) {
    return refuse('malformed-header', `the ${STRIPE_HEADER.name} header is not t=<unix seconds> with at least one v1=<sha256 in hex>`);
  }
  return { signedPrefix: `${t}.`, seconds: Number(t), candidates, signatureHeader: STRIPE_HEADER, timestampHeader: STRIPE_HEADER };
}

/** `X-Slack-Signature: v0=<hex>` over `v0:<X-Slack-Request-Timestamp>:<body>`. */
function parseSlack(request: SignedRequest): Parsed | Refusal {
  const value = singleHeader(request.headers, SLACK_SIGNATURE_HEADER);
  if (typeof value !== 'string') return value;
  const ts = singleHeader(request.headers, SLACK_TIMESTAMP_HEADER);
  if (typeof ts !== 'string') return ts;
  if (!SECONDS.test(ts)) return refuse('malformed-header', `the ${SLACK_TIMESTAMP_HEADER.name} header is not a time in unix seconds`);
  const digest = value.startsWith('v0=') ? decodeDigest(value.slice(3), 'hex', SHA256_LENGTH) : null;
  if (digest === null) return refuse('malformed-header', `the ${SLACK_SIGNATURE_HEADER.name} header is not v0= followed by a sha256 digest in hex`);
  return {
    signedPrefix: `v0:${ts}:`,
    seconds: Number(ts),
    candidates: [digest],
    signatureHeader: SLACK_SIGNATURE_HEADER,
    timestampHeader: SLACK_TIMESTAMP_HEADER,
  };
}

/**
 * `webhook-id`, `webhook-timestamp` and `webhook-signature: v1,<b64> [v1,<b64>…]` (or `svix-…`),
 * over `<id>.<timestamp>.<body>`. The family is picked by its signature header, and the id and
 * timestamp are read from the same family, so a mix of names is a missing header. Entries of
 * other versions (`v1a,` for asymmetric keys) are skipped, as the standardwebhooks library does.
 */
function parseStandard(request: SignedRequest): Parsed | Refusal {
  const family = STANDARD_FAMILIES.find((f) => request.headers[f.signature.key] !== undefined) ?? STANDARD_FAMILIES[0]!;
  const value = singleHeader(request.headers, family.signature);
  if (typeof value !== 'string')
    return refuse(value.reason, value.reason === 'missing-header' ? 'the webhook-signature (or svix-signature) header is missing' : value.detail);
  const id = singleHeader(request.headers, family.id);
  if (typeof id !== 'string') return id;
  const ts = singleHeader(request.headers, family.timestamp);
  if (typeof ts !== 'string') return ts;
  if (id.length === 0) return refuse('malformed-header', `the ${family.id.name} header is empty`);
  if (!SECONDS.test(ts)) return refuse('malformed-header', `the ${family.timestamp.name} header is not a time in unix seconds`);
  const candidates: Buffer[] = [];
  for (const entry of value.split(' ')) {
    if (!entry.startsWith('v1,')) continue;
    const digest = decodeDigest(entry.slice(3), 'base64', SHA256_LENGTH);
    if (digest !== null) candidates.push(digest);
  }
  if (candidates.length === 0) return refuse('malformed-header', `the ${family.signature.name} header holds no v1,<sha256 in base64> signature`);
  return { signedPrefix: `${id}.${ts}.`, seconds: Number(ts), candidates, signatureHeader: family.signature, timestampHeader: family.timestamp };
}
