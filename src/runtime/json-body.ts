// A JSON request body, read once for every parameter: its top-level members bind by name, and
// the parsed document is kept for the parameters that select with a JSONPath (sources.ts).
// serve (server/body-whole.ts) and dry-run --body read a body with this same function.

import type { JsonBody } from './sources.js';
import { namedValues } from './json-values.js';
import { locateJsonError } from './json-locate.js';
import type { ValueMap } from './urlencoded.js';

export type JsonBodyResult = { readonly ok: true; readonly json: JsonBody } | { readonly ok: false; readonly detail: string };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Any JSON value is a body (senders post nested objects, and some an array of events). Members
 * of a top-level object that are scalars or arrays of scalars are added to `into` by name; the
 * others are reached only through a JSONPath.
 */
export function readJsonBody(bytes: Uint8Array, into: ValueMap): JsonBodyResult {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { ok: false, detail: 'malformed JSON body: it is not valid UTF-8' };
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    const located = locateJsonError(text);
    // JSON.parse refused what the scanner accepts: only its words are left (never the body).
    if (located === null) return { ok: false, detail: `malformed JSON body: ${(error as Error).message.replace(/, ".*" is not valid JSON$/s, '')}` };
    return { ok: false, detail: `malformed JSON body at line ${located.line}, column ${located.column}: ${located.problem}` };
  }
  if (document !== null && typeof document === 'object' && !Array.isArray(document)) {
    for (const name in document) {
      const values = namedValues((document as Record<string, unknown>)[name]);
      if (values === null) continue;
      const list = into.get(name);
      if (list === undefined) into.set(name, values);
      // A loop, not push(...values): a request can send more values than a call has room for arguments.
      else for (const v of values) list.push(v);
    }
  }
  return { ok: true, json: { document } };
}
