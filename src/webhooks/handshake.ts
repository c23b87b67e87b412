// Answering a sender's endpoint verification (docs/language.md, "<handshake>"): `<handshake>` on an
// endpoint will be checked right after the signature and before any parameter is bound; a
// handshake answer ends the request (no task runs, nothing is deduplicated), and anything else
// goes on as a normal delivery. Pure: the request's method, query, headers and body in, a
// description of the answer out, which the HTTP server writes.
//
// What is echoed is bounded. Each handshake sends back a value from the request (a challenge, a
// token), and an endpoint that echoes any text is a reflector: a megabyte of it, or a value
// with control characters written into logs and terminals. Real challenges are short printable
// strings (Slack's and Zoom's about 40 characters, Meta's a number, Graph's a sentence of about
// 150), so a value longer than 1 KiB or holding a control, format (U+202E) or separator (U+2028)
// character is refused with a 400,
// not echoed, and not passed on as a delivery either: a request that names itself a handshake
// is never an event.

import type { KeyObject } from 'node:crypto';
import { hmac, sameBytes, tokenDigest } from './digest.js';
import type { RequestHeaders } from './signature-description.js';

export const HANDSHAKE_SCHEMES = ['slack', 'zoom', 'meta', 'graph'] as const;
export type HandshakeScheme = (typeof HANDSHAKE_SCHEMES)[number];

/** What a `<handshake>` compiles to: Zoom needs its secret token, Meta the verify token (kept as its SHA-256, see TokenSignature). */
export type HandshakeDescription =
  | { readonly scheme: 'slack' }
  | { readonly scheme: 'zoom'; readonly key: KeyObject }
  | { readonly scheme: 'meta'; readonly verifyTokenDigest: Buffer }
  | { readonly scheme: 'graph' };

export interface HandshakeRequest {
  readonly method: string;
  /** The query string's values by name, decoded (runtime/urlencoded.ts). */
  readonly query: ReadonlyMap<string, readonly string[]>;
  readonly headers: RequestHeaders;
  readonly body: Buffer;
  /** The body's JSON document when the server has parsed it already; absent, the body is parsed here if it is JSON. */
  readonly json?: unknown;
}

export type HandshakeAnswer =
  | { readonly kind: 'not-a-handshake' }
  | { readonly kind: 'answer'; readonly status: 200; readonly contentType: string; readonly body: string }
  /** Written as a problem+json; `detail` never quotes what was sent. */
  | { readonly kind: 'refused'; readonly status: 400 | 403; readonly detail: string };

export const MAX_ECHOED_LENGTH = 1024;
// Control characters (Unicode's Cc: C0, DEL and C1): nothing a challenge holds, and what a log
// or a terminal obeys.
// Control (Cc), format (Cf: U+202E, U+200B, U+FEFF) and line and paragraph separators (Zl, Zp:
// U+2028, U+2029): none is printable, and each can hide or reorder what a log or terminal shows.
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;
// A handshake body is a few hundred bytes; a larger one is a delivery and is not parsed here twice.
const MAX_HANDSHAKE_BODY = 64 * 1024;
const NOT_A_HANDSHAKE: HandshakeAnswer = Object.freeze({ kind: 'not-a-handshake' });
const TEXT = 'text/plain; charset=utf-8';

export function answerHandshake(handshake: HandshakeDescription, request: HandshakeRequest): HandshakeAnswer {
  switch (handshake.scheme) {
    case 'slack':
      return slack(request);
    case 'zoom':
      return zoom(handshake.key, request);
    case 'meta':
      return meta(handshake.verifyTokenDigest, request);
    case 'graph':
      return graph(request);
  }
}

/** Slack's Events API: POST `{"type":"url_verification","challenge":C,…}` → C as text. */
function slack(request: HandshakeRequest): HandshakeAnswer {
  const document = jsonObject(request);
  if (document === null || document.type !== 'url_verification') return NOT_A_HANDSHAKE;
  const challenge = echoable(document.challenge, 'the challenge');
  return typeof challenge === 'string' ? { kind: 'answer', status: 200, contentType: TEXT, body: challenge } : challenge;
}

/** Zoom: POST `{"event":"endpoint.url_validation","payload":{"plainToken":P}}` → P and its HMAC-SHA256 in hex, as JSON. */
function zoom(key: KeyObject, request: HandshakeRequest): HandshakeAnswer {
  const document = jsonObject(request);
  if (document === null || document.event !== 'endpoint.url_validation') return NOT_A_HANDSHAKE;
  const payload = document.payload;
  const plainToken = echoable(isObject(payload) ? payload.plainToken : undefined, 'payload.plainToken');
  if (typeof plainToken !== 'string') return plainToken;
  const encryptedToken = hmac('sha256', key, '', Buffer.from(plainToken, 'utf8')).toString('hex');
  return { kind: 'answer', status: 200, contentType: 'application/json', body: JSON.stringify({ plainToken, encryptedToken }) };
}

/** Meta (WhatsApp, Messenger, Instagram): GET `?hub.mode=subscribe&hub.verify_token=T&hub.challenge=C` → C, when T is the verify token. */
function meta(verifyTokenDigest: Buffer, request: HandshakeRequest): HandshakeAnswer {
  if (request.method !== 'GET') return NOT_A_HANDSHAKE;
  const mode = queryValue(request, 'hub.mode');
  if (mode === undefined) return NOT_A_HANDSHAKE;
  if (typeof mode !== 'string') return mode;
  if (mode !== 'subscribe') return refused(400, 'hub.mode is not "subscribe"');
  const token = queryValue(request, 'hub.verify_token');
  if (typeof token !== 'string') return token ?? refused(403, 'hub.verify_token is missing');
  // Constant-time, on digests: the comparison tells nothing of the token's length or content.
  if (!sameBytes(verifyTokenDigest, tokenDigest(token))) return refused(403, 'hub.verify_token does not match the configured verify token');
  const sent = queryValue(request, 'hub.challenge');
  const challenge = typeof sent === 'object' ? sent : echoable(sent, 'hub.challenge');
  return typeof challenge === 'string' ? { kind: 'answer', status: 200, contentType: TEXT, body: challenge } : challenge;
}

/** Microsoft Graph: a request (a POST, with an empty body) with `?validationToken=T` → T as text. */
function graph(request: HandshakeRequest): HandshakeAnswer {
  const token = queryValue(request, 'validationToken');
  if (token === undefined) return NOT_A_HANDSHAKE;
  const echoed = typeof token === 'object' ? token : echoable(token, 'validationToken');
  return typeof echoed === 'string' ? { kind: 'answer', status: 200, contentType: TEXT, body: echoed } : echoed;
}

function refused(status: 400 | 403, detail: string): HandshakeAnswer {
  return { kind: 'refused', status, detail: `Not a valid handshake: ${detail}.` };
}

/** `value` when it may be sent back (a string of 1 to MAX_ECHOED_LENGTH printable characters), else the refusal. */
function echoable(value: unknown, what: string): string | HandshakeAnswer {
  if (typeof value !== 'string' || value.length === 0) return refused(400, `${what} is missing or not a string`);
  if (value.length > MAX_ECHOED_LENGTH) return refused(400, `${what} is longer than ${MAX_ECHOED_LENGTH} characters`);
  if (UNPRINTABLE.test(value)) return refused(400, `${what} holds a control, format or separator character`);
  return value;
}

/** The one value of a query parameter; undefined when absent; a refusal when sent more than once (which one to echo or compare?). */
function queryValue(request: HandshakeRequest, name: string): string | undefined | HandshakeAnswer {
  const values = request.query.get(name);
  if (values === undefined || values.length === 0) return undefined;
  if (values.length > 1) return refused(400, `${name} is sent more than once`);
  return values[0]!;
}

type JsonObject = Readonly<Record<string, unknown>>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The POST body as a JSON object: the server's parse when given, else parsed here when the content type says JSON. */
function jsonObject(request: HandshakeRequest): JsonObject | null {
  if (request.method !== 'POST') return null;
  if (request.json !== undefined) return isObject(request.json) ? request.json : null;
  if (request.body.length === 0 || request.body.length > MAX_HANDSHAKE_BODY || !isJsonType(request.headers['content-type'])) return null;
  try {
    const document: unknown = JSON.parse(request.body.toString('utf8'));
    return isObject(document) ? document : null;
  } catch {
    return null;
  }
}

function isJsonType(values: readonly string[] | undefined): boolean {
  if (values === undefined || values.length !== 1) return false;
  const type = values[0]!.split(';', 1)[0]!.trim().toLowerCase();
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}
