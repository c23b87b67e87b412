// Zoom's signature on its URL validation (docs/language.md, "<handshake>"): Zoom signs every
// request it sends, the validation included, as Slack does under its own names:
// `x-zm-signature: v0=<hex>` over `v0:<x-zm-request-timestamp>:<body>` with the app's secret
// token, the very key the answer is made with. The handshake is answered only when this
// verifies: the answer is an HMAC of a value the caller chooses, and answering anyone would hand
// out Zoom signatures (of `v0:<ts>:<any body>`) to whoever asks.

import type { KeyObject } from 'node:crypto';
import { decodeDigest, hmac, sameBytes } from './digest.js';
import { VERIFIED, headerName, noMatch, outsideTolerance, refuse, singleHeader, type SignedRequest } from './refusal.js';
import { DEFAULT_TOLERANCE_MS, type VerificationResult } from './signature-description.js';

export const ZOOM_SIGNATURE_HEADER = headerName('x-zm-signature');
export const ZOOM_TIMESTAMP_HEADER = headerName('x-zm-request-timestamp');

const SECONDS = /^\d{1,12}$/;
const SHA256_LENGTH = 32;

export function verifyZoom(key: KeyObject, request: SignedRequest, now: number | null): VerificationResult {
  const value = singleHeader(request.headers, ZOOM_SIGNATURE_HEADER);
  if (typeof value !== 'string') return value;
  const ts = singleHeader(request.headers, ZOOM_TIMESTAMP_HEADER);
  if (typeof ts !== 'string') return ts;
  if (!SECONDS.test(ts)) return refuse('malformed-header', `the ${ZOOM_TIMESTAMP_HEADER.name} header is not a time in unix seconds`);
  const digest = value.startsWith('v0=') ? decodeDigest(value.slice(3), 'hex', SHA256_LENGTH) : null;
  if (digest === null) return refuse('malformed-header', `the ${ZOOM_SIGNATURE_HEADER.name} header is not v0= followed by a sha256 digest in hex`);
  if (!sameBytes(hmac('sha256', key, `v0:${ts}:`, request.body), digest)) return noMatch(ZOOM_SIGNATURE_HEADER);
  return outsideTolerance(Number(ts), now, DEFAULT_TOLERANCE_MS, ZOOM_TIMESTAMP_HEADER) ?? VERIFIED;
}
