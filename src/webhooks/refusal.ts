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
  /** The body's JSON document when the server parsed one; absent, a field read from the body parses it here. */
  readonly json?: unknown;
}

export function headerName(name: string): HeaderName {
  const pointer = name.startsWith(JSON_SOURCE) ? jsonPointer(name.slice(JSON_SOURCE.length)) : null;
  return pointer === null ? { name, key: name.toLowerCase() } : { name, key: name, pointer };
}

/** How a field of the JSON body is named where a header could be: `json:/signature/token`. */
export const JSON_SOURCE = 'json:';

/** The reference tokens of a JSON pointer (RFC 6901), or null when it is not one. */
export function jsonPointer(text: string): string[] | null {
  if (!text.startsWith('/')) return null;
  return text
    .slice(1)
    .split('/')
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** "the X header", or "the body's /a/b field": what a refusal's detail names. */
export function where(header: HeaderName): string {
  return header.pointer === undefined ? `the ${header.name} header` : `the body's ${header.name.slice(JSON_SOURCE.length)} field`;
}

/** Whether the request carries the header (or the body the field). */
export function present(request: SignedRequest, header: HeaderName): boolean {
  if (header.pointer === undefined) return request.headers[header.key] !== undefined;
  return bodyField(request, header.pointer) !== undefined;
}

/** The one value of a header or of a body field (a string, or a number written as JSON writes it), or why there is none. */
export function readValue(request: SignedRequest, header: HeaderName): string | Refusal {
  if (header.pointer === undefined) return singleHeader(request.headers, header);
  const value = bodyField(request, header.pointer);
  if (value === undefined) return refuse('missing-header', `${where(header)} is missing`);
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') return refuse('malformed-header', `${where(header)} is not a string`);
  return value;
}

// A body is parsed once however many fields are read from it; the server's parse is used when given.
const parsedBodies = new WeakMap<Buffer, unknown>();
const NOT_JSON = Symbol('not JSON');

function bodyField(request: SignedRequest, pointer: readonly string[]): unknown {
  let document = request.json;
  if (document === undefined) {
    if (!parsedBodies.has(request.body)) parsedBodies.set(request.body, parseJson(request.body));
    document = parsedBodies.get(request.body);
  }
  for (const token of pointer) {
    if (typeof document !== 'object' || document === null || !Object.hasOwn(document, token)) return undefined;
    document = (document as Record<string, unknown>)[token];
  }
  return document === NOT_JSON ? undefined : document;
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return NOT_JSON;
  }
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
  const place = header.pointer === undefined ? `the ${header.name} header` : where(header);
  return refuse('no-match', `the signature in ${place} does not match: the body differs from what was signed, or it was signed with another secret`);
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
    `the timestamp in ${where(header)} is more than ${formatDuration(toleranceMs)} ${when}: a replayed delivery, or a clock out of sync`,
  );
}
