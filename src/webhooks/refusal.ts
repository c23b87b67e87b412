// The steps every signature scheme shares (docs/language.md, "<signature>"): reading the one value
// of a header, and the refusals with their details. A detail names headers and limits, never a
// header's value or a secret: it is sent back in a 401 and written to the log.

import { formatDuration } from '../units.js';
import type { HeaderName, RefusalReason, RequestHeaders, VerificationResult } from './signature-description.js';

export type Refusal = Extract<VerificationResult, { ok: false }>;
export const VERIFIED: VerificationResult = Object.freeze({ ok: true });

export function refuse(reason: RefusalReason, detail: string): Refusal {
  return { ok: false, reason, detail };
}

/** What a delivery brings to verification: its headers and the body exactly as received. */
export interface SignedRequest {
  readonly headers: RequestHeaders;
  readonly body: Buffer;
  /** The request's method, for {method}; POST when absent. */
  readonly method?: string | undefined;
  /** The full URL the sender used (scheme, host, path and query), for {url}; empty when absent. */
  readonly url?: string | undefined;
}

export function headerName(name: string): HeaderName {
  return { name, key: name.toLowerCase() };
}

/**
 * The one value of a header, or why there is none. A header sent twice is refused as malformed
 * rather than tried value by value: no sender repeats its signature header, and a proxy that
 * duplicates it is worth hearing about.
 */
export function singleHeader(headers: RequestHeaders, header: HeaderName): string | Refusal {
  const values = headers[header.key];
  if (values === undefined || values.length === 0) return refuse('missing-header', `the ${header.name} header is missing`);
  if (values.length > 1) return refuse('malformed-header', `the ${header.name} header is sent ${values.length} times; a sender sends it once`);
  return values[0]!;
}

/** The detail of a signature that was well formed but made with another key or over other bytes. */
export function noMatch(header: HeaderName): Refusal {
  return refuse(
    'no-match',
    `the signature in the ${header.name} header does not match: the body differs from what was signed, or it was signed with another secret`,
  );
}

/**
 * Why a timestamp is refused, or null when it is within `toleranceMs` of `now` either way.
 * `now`: epoch milliseconds; null for a delivery replayed from the log, whose signature is checked
 * again but whose timestamp is as old as the delivery (docs/deliveries.md, "Replay").
 */
export function outsideTolerance(seconds: number, now: number | null, toleranceMs: number, header: HeaderName): Refusal | null {
  return outsideToleranceMs(seconds * 1000, now, toleranceMs, header);
}

/** outsideTolerance of a timestamp in epoch milliseconds. */
export function outsideToleranceMs(ms: number, now: number | null, toleranceMs: number, header: HeaderName): Refusal | null {
  if (now === null) return null;
  const age = now - ms;
  if (Math.abs(age) <= toleranceMs) return null;
  const when = age > 0 ? 'old' : "ahead of the server's clock";
  return refuse(
    'timestamp-outside-tolerance',
    `the timestamp in the ${header.name} header is more than ${formatDuration(toleranceMs)} ${when}: a replayed delivery, or a clock out of sync`,
  );
}
