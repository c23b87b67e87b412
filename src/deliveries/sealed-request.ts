// The received request, sealed for the log with AES-256-GCM (the queue's sealing, queue/seal.ts):
// headers and raw body are request values, so they never sit in a store in clear. Bound to its
// delivery id, so a blob copied onto another delivery does not open.

import { seal, unsealBytes, type QueueKey } from '../queue/seal.js';
import type { CapturedRequest } from './log-entry.js';
import type { KeptRequest } from './record.js';

/**
 * What is sealed: a format byte, the length of the head (4 bytes, big-endian), the head as JSON
 * (method, URL, node's rawHeaders) and the body's bytes as received. The body is neither encoded
 * nor escaped: for a webhook of 20 KB, base64 and JSON of the body were most of sealing's cost.
 */
const FORMAT = 1;
interface Head {
  readonly m: string;
  readonly u: string;
  readonly h: readonly string[];
}

/** The first format: JSON of the request, its body as base64. Still opened, never written. */
interface JsonShape {
  readonly m: string;
  readonly u: string;
  readonly h: readonly (readonly [string, string])[];
  readonly b: string;
}

export function sealRequest(keys: readonly QueueKey[], delivery: string, request: CapturedRequest): string {
  const head = Buffer.from(JSON.stringify({ m: request.method, u: request.url, h: request.rawHeaders } satisfies Head), 'utf8');
  const chunks = request.body ?? [];
  let length = 5 + head.length;
  for (const chunk of chunks) length += chunk.byteLength;
  const plain = Buffer.allocUnsafe(length);
  plain[0] = FORMAT;
  plain.writeUInt32BE(head.length, 1);
  head.copy(plain, 5);
  let at = 5 + head.length;
  for (const chunk of chunks) {
    plain.set(chunk, at);
    at += chunk.byteLength;
  }
  return seal(keys, plain, `delivery:${delivery}`);
}

/** Throws SealError when the key does not open it. */
export function unsealRequest(keys: readonly QueueKey[], delivery: string, sealed: string): KeptRequest {
  const plain = unsealBytes(keys, sealed, `delivery:${delivery}`);
  if (plain[0] !== FORMAT) {
    const shape = JSON.parse(plain.toString('utf8')) as JsonShape;
    return { method: shape.m, url: shape.u, headers: shape.h, body: Buffer.from(shape.b, 'base64') };
  }
  const headEnd = 5 + plain.readUInt32BE(1);
  const head = JSON.parse(plain.toString('utf8', 5, headEnd)) as Head;
  const headers: [string, string][] = [];
  for (let i = 0; i + 1 < head.h.length; i += 2) headers.push([head.h[i]!, head.h[i + 1]!]);
  return { method: head.m, url: head.u, headers, body: plain.subarray(headEnd) };
}

/** node's rawHeaders without the headers named `name` (lower case). */
export function withoutHeader(raw: readonly string[], name: string): string[] {
  const kept: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.toLowerCase() !== name) kept.push(raw[i]!, raw[i + 1]!);
  return kept;
}
