// The received request, sealed for the log with AES-256-GCM (the queue's sealing, queue/seal.ts):
// headers and raw body are request values, so they never sit in a store in clear. Bound to its
// delivery id, so a blob copied onto another delivery does not open.

import { seal, unseal, type QueueKey } from '../queue/seal.js';
import type { CapturedRequest } from './log-entry.js';
import type { KeptRequest } from './record.js';

interface SealedShape {
  readonly m: string;
  readonly u: string;
  readonly h: readonly (readonly [string, string])[];
  /** base64 */
  readonly b: string;
}

export function sealRequest(keys: readonly QueueKey[], delivery: string, request: KeptRequest): string {
  const shape: SealedShape = { m: request.method, u: request.url, h: request.headers, b: request.body.toString('base64') };
  return seal(keys, JSON.stringify(shape), `delivery:${delivery}`);
}

/** Throws SealError when the key does not open it. */
export function unsealRequest(keys: readonly QueueKey[], delivery: string, sealed: string): KeptRequest {
  const shape = JSON.parse(unseal(keys, sealed, `delivery:${delivery}`)) as SealedShape;
  return { method: shape.m, url: shape.u, headers: shape.h, body: Buffer.from(shape.b, 'base64') };
}

/** The request as kept: its headers as pairs, its body a Buffer. */
export function keptRequest(captured: CapturedRequest): KeptRequest {
  const raw = captured.rawHeaders;
  const headers: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) headers.push([raw[i]!, raw[i + 1]!]);
  const body = captured.body === null ? Buffer.alloc(0) : Buffer.from(captured.body.buffer, captured.body.byteOffset, captured.body.byteLength);
  return { method: captured.method, url: captured.url, headers, body };
}

/** node's rawHeaders without the headers named `name` (lower case). */
export function withoutHeader(raw: readonly string[], name: string): string[] {
  const kept: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.toLowerCase() !== name) kept.push(raw[i]!, raw[i + 1]!);
  return kept;
}
