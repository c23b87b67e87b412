// A JSON request body, read once for every parameter: its top-level members bind by name, and
// the values each JSONPath parameter selects are read from the parsed document (sources.ts).
// serve (server/body/whole.ts) and dry-run --body read a body with these same functions.
//
// A body of at most INLINE_JSON_BYTES is parsed where it arrives (readJsonBody). A larger one is
// parsed and selected from on another thread (server/body/json-thread.ts runs readJsonBodyData), and
// only its values come back (jsonBodyOf): parsing 9 MB and walking it with `$..x` held the event
// loop for seconds (docs/behaviour.md, "Parameters and their rules").

import type { JsonPathQuery } from '../compiler/json-path.js';
import { compileJsonPath } from '../compiler/json-path.js';
import type { JsonBody } from './sources.js';
import { namedValues, rawNumber, selectValues, MAX_PARAMETER_VALUES, type SelectionProblem } from './json-values.js';
import { locateJsonError } from './json-locate.js';
import type { ValueMap } from './urlencoded.js';

export type JsonBodyResult = { readonly ok: true; readonly json: JsonBody } | { readonly ok: false; readonly detail: string };

/** The largest JSON body parsed on the thread that reads it; a larger one goes to another thread. */
export const INLINE_JSON_BYTES = 64 * 1024;

/** At most this many values bind by name from one body, over all its top-level members. */
export const MAX_NAMED_VALUES = 2 * MAX_PARAMETER_VALUES;

const utf8 = new TextDecoder('utf-8', { fatal: true });

type Parsed = { readonly ok: true; readonly document: unknown } | { readonly ok: false; readonly detail: string };

// A number with 16 digits in a row or a three-digit exponent may not fit a double: only then is
// the body parsed again with a reviver that keeps such a number's text (json-values.ts).
const MAY_NOT_FIT = /\d{16}|[eE]\+?\d{3}/;

interface ReviverContext {
  readonly source?: string;
}

function keepNumberText(this: unknown, _key: string, value: unknown, context?: ReviverContext): unknown {
  if (typeof value !== 'number' || context?.source === undefined) return value;
  if (!Number.isFinite(value) || (!Number.isSafeInteger(value) && /^-?\d+$/.test(context.source))) return rawNumber(context.source);
  return value;
}

function parseJson(bytes: Uint8Array): Parsed {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { ok: false, detail: 'malformed JSON body: it is not valid UTF-8' };
  }
  try {
    const document: unknown = MAY_NOT_FIT.test(text) ? JSON.parse(text, keepNumberText as (key: string, value: unknown) => unknown) : JSON.parse(text);
    return { ok: true, document };
  } catch (error) {
    const located = locateJsonError(text);
    // JSON.parse refused what the scanner accepts: only its words are left (never the body).
    if (located === null) return { ok: false, detail: `malformed JSON body: ${(error as Error).message.replace(/, ".*" is not valid JSON$/s, '')}` };
    return { ok: false, detail: `malformed JSON body at line ${located.line}, column ${located.column}: ${located.problem}` };
  }
}

/**
 * Members of a top-level object that are scalars or arrays of scalars, by name; the others are
 * reached only through a JSONPath. A detail when the body binds more than MAX_NAMED_VALUES.
 */
function named(document: unknown, add: (name: string, values: string[]) => void): string | null {
  if (document === null || typeof document !== 'object' || Array.isArray(document)) return null;
  let count = 0;
  for (const name in document) {
    const values = namedValues((document as Record<string, unknown>)[name]);
    if (values === null) continue;
    count += values.length;
    if (count > MAX_NAMED_VALUES) return `the JSON body's top-level members hold more than ${MAX_NAMED_VALUES} values`;
    add(name, values);
  }
  return null;
}

function addTo(into: ValueMap): (name: string, values: string[]) => void {
  return (name, values) => {
    const list = into.get(name);
    if (list === undefined) into.set(name, values);
    // A loop, not push(...values): a request can send more values than a call has room for arguments.
    else for (const v of values) list.push(v);
  };
}

/**
 * Any JSON value is a body (senders post nested objects, and some an array of events). Members
 * of a top-level object that are scalars or arrays of scalars are added to `into` by name; the
 * document is kept for the parameters that select with a JSONPath.
 */
export function readJsonBody(bytes: Uint8Array, into: ValueMap): JsonBodyResult {
  const parsed = parseJson(bytes);
  if (!parsed.ok) return parsed;
  const document = parsed.document;
  const problem = named(document, addTo(into));
  if (problem !== null) return { ok: false, detail: problem };
  const maxChars = bytes.length;
  return { ok: true, json: { document, select: (_path, query) => selectValues(query, document, maxChars) } };
}

/**
 * Values as another thread sends them: one text and where each value ends. A million short
 * strings cost the receiving event loop 170 ms to take apart as a list (structured clone), and a
 * few milliseconds as one text and one typed array.
 */
export interface PackedValues {
  readonly text: string;
  readonly ends: Uint32Array;
}

function pack(values: readonly string[]): PackedValues {
  const ends = new Uint32Array(values.length);
  let at = 0;
  for (let i = 0; i < values.length; i++) ends[i] = at += values[i]!.length;
  return { text: values.join(''), ends };
}

function unpack(packed: PackedValues): string[] {
  const values = new Array<string>(packed.ends.length);
  let from = 0;
  for (let i = 0; i < packed.ends.length; i++) {
    const to = packed.ends[i]!;
    values[i] = packed.text.slice(from, to);
    from = to;
  }
  return values;
}

/** What another thread sends back for a large body: plain data, no document. */
export type JsonBodyData =
  | { readonly ok: false; readonly detail: string }
  | {
      readonly ok: true;
      readonly named: readonly (readonly [string, PackedValues])[];
      /** By the text of each JSONPath the endpoint's parameters read. */
      readonly selected: readonly (readonly [string, PackedValues | SelectionProblem])[];
    };

/** Runs on the other thread: parses the body and selects the values of each of `paths`. */
export function readJsonBodyData(bytes: Uint8Array, paths: readonly string[]): JsonBodyData {
  const parsed = parseJson(bytes);
  if (!parsed.ok) return parsed;
  const pairs: [string, PackedValues][] = [];
  const problem = named(parsed.document, (name, values) => pairs.push([name, pack(values)]));
  if (problem !== null) return { ok: false, detail: problem };
  const selected: [string, PackedValues | SelectionProblem][] = [];
  for (const path of paths) {
    const compiled = compileJsonPath(path);
    if (!compiled.ok) continue;
    const values = selectValues(compiled.query, parsed.document, bytes.length);
    selected.push([path, 'problem' in values ? values : pack(values)]);
  }
  return { ok: true, named: pairs, selected };
}

/** The body another thread read, as readJsonBody would have given it (without the document). */
export function jsonBodyOf(data: JsonBodyData, into: ValueMap): JsonBodyResult {
  if (!data.ok) return data;
  const add = addTo(into);
  for (const [name, values] of data.named) add(name, unpack(values));
  const selected = new Map<string, readonly string[] | SelectionProblem>();
  for (const [path, values] of data.selected) selected.set(path, 'problem' in values ? values : unpack(values));
  return { ok: true, json: { select: (path: string, _query: JsonPathQuery) => selected.get(path) ?? [] } };
}

/** The distinct JSONPaths an endpoint's parameters read, for the thread that reads a large body. */
export function jsonPathsOf(parameters: readonly { readonly source: { readonly kind: string; readonly path?: string } }[]): readonly string[] {
  const paths = new Set<string>();
  for (const declaration of parameters) if (declaration.source.kind === 'jsonpath' && declaration.source.path !== undefined) paths.add(declaration.source.path);
  return [...paths];
}
