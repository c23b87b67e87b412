// dry-run --body, --content-type and --header: a webhook delivery from a file, read with the
// readers serve uses (runtime/json-body.ts, the form parser, the same 415), so header- and
// JSONPath-bound parameters get exactly the values serve would give them (docs/dry-run.md,
// "Simulating a webhook").

import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { readJsonBody } from '../runtime/json-body.js';
import { NO_SOURCES, type JsonBody, type RequestSources } from '../runtime/sources.js';
import { parseUrlEncoded } from '../runtime/urlencoded.js';
import { mediaTypeOf, unsupportedMediaType } from '../server/body/intake.js';
import type { SimulatedBody } from './plan/model.js';
import type { RawBody } from '../upload.js';

const TYPES_BY_EXTENSION: Readonly<Record<string, string>> = { '.json': 'application/json', '.xml': 'application/xml' };

export type SimulatedRequest =
  | {
      readonly kind: 'request';
      readonly sources: RequestSources;
      readonly body: SimulatedBody | null;
      /** The body as a task that forwards it would send it. */
      readonly raw: RawBody | null;
      readonly headers: readonly (readonly [string, string])[];
    }
  /** Not simulated: the options cannot be used (exit 2). */
  | { readonly kind: 'usage'; readonly message: string }
  /** serve would refuse the body before any endpoint decides (exit 1). */
  | { readonly kind: 'refused'; readonly status: number; readonly detail: string };

export interface RequestOptions {
  readonly body: string | undefined;
  readonly contentType: string | undefined;
  readonly header: readonly [string, string][] | undefined;
}

/**
 * Reads --body and --header; the body's parameters by name go into `raw`, after the --param
 * values. `anyType`: every simulated endpoint keeps the body raw for a task that forwards it, and
 * accepts any content type, as serve does (no 415).
 */
export function simulatedRequest(options: RequestOptions, raw: Map<string, string[]>, anyType = false): SimulatedRequest {
  const headerList = options.header ?? [];
  const headers: Record<string, string[]> = {};
  for (const [name, value] of headerList) (headers[name.toLowerCase()] ??= []).push(value);
  if (options.body === undefined) {
    if (options.contentType !== undefined) return { kind: 'usage', message: '--content-type describes the --body file: give --body too' };
    return { kind: 'request', sources: headerList.length === 0 ? NO_SOURCES : { headers, json: null }, body: null, raw: null, headers: headerList };
  }
  let bytes: Buffer;
  try {
    bytes = readFileSync(options.body);
  } catch (error) {
    return { kind: 'usage', message: `cannot read the --body file ${options.body}: ${unreadableBecause(error)}` };
  }
  const contentType = options.contentType ?? headers['content-type']?.[0] ?? TYPES_BY_EXTENSION[extname(options.body).toLowerCase()];
  if (contentType === undefined) return { kind: 'usage', message: `give --content-type for ${options.body}: its type is known only for .json and .xml files` };
  headers['content-type'] = [contentType];
  const mediaType = mediaTypeOf(contentType);
  const body: SimulatedBody = { file: options.body, size: bytes.length, contentType };
  let json: JsonBody | null = null;
  if (mediaType === 'application/json') {
    const read = readJsonBody(bytes, raw);
    if (!read.ok) return { kind: 'refused', status: 400, detail: read.detail };
    json = read.json;
  } else if (mediaType === 'application/x-www-form-urlencoded') {
    const problem = parseUrlEncoded(bytes.toString('utf8'), raw, 'form body');
    if (problem !== null) return { kind: 'refused', status: 400, detail: problem };
  } else if (mediaType === 'multipart/form-data') {
    return { kind: 'usage', message: 'dry-run does not read a multipart body: give its fields with --param' };
  } else if (!anyType) {
    const refusal = unsupportedMediaType(mediaType);
    return { kind: 'refused', status: refusal.status, detail: refusal.detail };
  }
  return {
    kind: 'request',
    sources: { headers, json },
    body,
    raw: { contentType, size: bytes.length, source: { kind: 'buffer', content: bytes } },
    headers: headerList,
  };
}

/** Why a file cannot be read, in words: a bare ENOENT says nothing to most people. */
function unreadableBecause(error: unknown): string {
  switch ((error as NodeJS.ErrnoException).code) {
    case 'ENOENT':
      return 'there is no such file (a path is taken from the current folder)';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a folder, not a file';
    case 'ENOTDIR':
      return 'a part of the path is not a folder';
    default:
      return (error as Error).message;
  }
}
