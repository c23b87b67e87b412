// The received request, sealed for the log with AES-256-GCM (the queue's sealing, queue/seal.ts):
// headers and raw body are request values, so they never sit in a store in clear. Bound to its
// delivery id, so a blob copied onto another delivery does not open.

import { seal, SealError, unsealBytes, type QueueKey } from '../queue/seal.js';
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
  return seal(keys, requestBytes(request), `delivery:${delivery}`);
}

/** The request as it is sealed (FORMAT): one buffer, the body's chunks copied in once. */
function requestBytes(request: CapturedRequest): Buffer {
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
  return plain;
}

/**
 * A batch's small requests are sealed together, one cipher for the group: setting up AES-GCM
 * cost more than the log's database write for a request without a body (performance-log.md,
 * 2026-11-28). A request larger than GROUP_PART_BYTES is sealed alone, and a group holds at
 * most GROUP_BYTES, so revealing one request opens at most that much.
 */
const GROUP_PART_BYTES = 64 << 10;
const GROUP_BYTES = 1 << 20;
/** A group's first byte: then, per request, the delivery id's length (2 bytes), the id, the request's length (4 bytes) and the request (FORMAT). */
const GROUP_FORMAT = 2;
/** What a delivery stores in place of its own blob: the group's id after this mark ('.' is in no base64url blob). */
const GROUP_MARK = 'g.';

/** A group of sealed requests, stored once beside the deliveries that name it. */
export interface SealedGroup {
  readonly id: string;
  readonly sealed: string;
}

/**
 * Seals the kept requests of one batch: `sealed[i]` is what delivery i stores, its own blob or
 * the name of its group, and `groups` the groups to store with them (in the same write).
 */
export function sealRequests(
  keys: readonly QueueKey[],
  requests: readonly { readonly delivery: string; readonly request: CapturedRequest }[],
): { readonly sealed: string[]; readonly groups: SealedGroup[] } {
  const sealed: string[] = new Array<string>(requests.length);
  const groups: SealedGroup[] = [];
  let members: { index: number; id: Buffer; plain: Buffer }[] = [];
  let bytes = 1;
  const close = () => {
    if (members.length === 1) {
      const only = members[0]!;
      sealed[only.index] = seal(keys, only.plain, `delivery:${requests[only.index]!.delivery}`);
    } else if (members.length > 1) {
      const id = requests[members[0]!.index]!.delivery;
      groups.push({ id, sealed: seal(keys, groupBytes(members, bytes), `delivery-group:${id}`) });
      for (const m of members) sealed[m.index] = GROUP_MARK + id;
    }
    members = [];
    bytes = 1;
  };
  for (let index = 0; index < requests.length; index++) {
    const { delivery, request } = requests[index]!;
    const plain = requestBytes(request);
    if (plain.length > GROUP_PART_BYTES) {
      sealed[index] = seal(keys, plain, `delivery:${delivery}`);
      continue;
    }
    const id = Buffer.from(delivery, 'utf8');
    const size = 6 + id.length + plain.length;
    if (bytes + size > GROUP_BYTES) close();
    members.push({ index, id, plain });
    bytes += size;
  }
  close();
  return { sealed, groups };
}

function groupBytes(members: readonly { id: Buffer; plain: Buffer }[], bytes: number): Buffer {
  const group = Buffer.allocUnsafe(bytes);
  group[0] = GROUP_FORMAT;
  let at = 1;
  for (const { id, plain } of members) {
    at = group.writeUInt16BE(id.length, at);
    at += id.copy(group, at);
    at = group.writeUInt32BE(plain.length, at);
    at += plain.copy(group, at);
  }
  return group;
}

/** The group a stored value names; null when it is a blob of its own. */
export function groupNamed(stored: string): string | null {
  return stored.startsWith(GROUP_MARK) ? stored.slice(GROUP_MARK.length) : null;
}

/** A grouped delivery's sealed request as a store gives it back: the group's name and its blob. */
export function withGroup(group: string, sealed: string): string {
  return `${GROUP_MARK}${group}.${sealed}`;
}

/**
 * What a store gives back for a delivery's stored `sealed`: its own blob as it is, or the name and
 * blob of the group it names, which `read` finds; null when not kept, or when its group is gone.
 */
export async function storedRequest(sealed: string | null, read: (group: string) => string | null | Promise<string | null>): Promise<string | null> {
  const group = sealed === null ? null : groupNamed(sealed);
  if (group === null) return sealed;
  const blob = await read(group);
  return blob === null ? null : withGroup(group, blob);
}

/** The bytes of `delivery`'s request in a group as withGroup gave it. */
function requestInGroup(keys: readonly QueueKey[], delivery: string, stored: string): Buffer {
  const dot = stored.indexOf('.', GROUP_MARK.length);
  if (dot < 0) throw new SealError('the sealed request names a group that was not found');
  const group = stored.slice(GROUP_MARK.length, dot);
  const plain = unsealBytes(keys, stored.slice(dot + 1), `delivery-group:${group}`);
  if (plain[0] !== GROUP_FORMAT) throw new SealError('the sealed group is of an unknown format');
  const wanted = Buffer.from(delivery, 'utf8');
  for (let at = 1; at < plain.length;) {
    const idEnd = at + 2 + plain.readUInt16BE(at);
    const length = plain.readUInt32BE(idEnd);
    if (plain.subarray(at + 2, idEnd).equals(wanted)) return plain.subarray(idEnd + 4, idEnd + 4 + length);
    at = idEnd + 4 + length;
  }
  // The group opened, so it is genuine: it was sealed for other deliveries than this one.
  throw new SealError(`the sealed group holds no request of delivery ${delivery}`);
}

/** Throws SealError when the key does not open it. */
export function unsealRequest(keys: readonly QueueKey[], delivery: string, sealed: string): KeptRequest {
  const plain = sealed.startsWith(GROUP_MARK) ? requestInGroup(keys, delivery, sealed) : unsealBytes(keys, sealed, `delivery:${delivery}`);
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
