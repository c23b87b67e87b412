// What JSON values become as parameter values (docs/language.md, "<parameter>"): a string its
// text, a number or boolean its JSON text, null nothing. By a JSONPath, an array of scalars gives
// several values and an object (or an array holding one) one value, its compact JSON text; by
// name, only scalars and arrays of scalars bind.
//
// A number a double cannot hold (`1e400`, an integer beyond 2^53 written with its digits) is kept
// as its JSON text (json-body.ts parses it as a raw JSON value), never as `null` or a rounded one.

import type { JsonPathQuery } from '../compiler/json-path.js';

/** A parameter takes at most this many values, from any source (docs/behaviour.md, "Parameters and their rules"). */
export const MAX_PARAMETER_VALUES = 250_000;

/** JSON.rawJSON's value (ES2025: JSON.parse source text access), which lib ES2023 does not declare. */
export interface RawJson {
  readonly rawJSON: string;
}
interface JsonRaw {
  rawJSON(text: string): RawJson;
  isRawJSON(value: unknown): value is RawJson;
}
const RAW = JSON as unknown as JsonRaw;

/** A number's text kept as written, for JSON.parse's reviver: `1e400`, `12345678901234567890`. */
export function rawNumber(text: string): RawJson {
  return RAW.rawJSON(text);
}

function isRawJson(value: unknown): value is RawJson {
  return RAW.isRawJSON(value);
}

/** The text a scalar binds as; null for null, an array or an object. */
export function scalarText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  if (typeof value === 'object' && value !== null && isRawJson(value)) return value.rawJSON;
  return null;
}

function isScalarOrNull(value: unknown): boolean {
  return value === null || (typeof value !== 'object' && value !== undefined) || isRawJson(value);
}

/** Adds what one node a JSONPath selected gives to `out`. */
export function addSelected(value: unknown, out: string[]): void {
  if (value === null) return;
  const text = scalarText(value);
  if (text !== null) {
    out.push(text);
    return;
  }
  if (Array.isArray(value) && value.every(isScalarOrNull)) {
    for (const item of value) {
      const t = scalarText(item);
      if (t !== null) out.push(t);
    }
    return;
  }
  out.push(JSON.stringify(value));
}

/** Why a JSONPath's values cannot be read; the words follow "cannot be read with PATH: ". */
export type SelectionProblem = { readonly problem: string };

/**
 * The values `query` selects in `document`, or why they cannot be read. At most
 * MAX_PARAMETER_VALUES values and at most `maxChars` characters in all (the body's own size: a
 * path that selects nested objects would otherwise write the same text again for each level),
 * the selection stopping as soon as either is passed.
 */
export function selectValues(query: JsonPathQuery, document: unknown, maxChars: number): string[] | SelectionProblem {
  const values: string[] = [];
  let chars = 0;
  try {
    for (const node of query.select(document)) {
      const from = values.length;
      addSelected(node, values);
      if (values.length > MAX_PARAMETER_VALUES) return { problem: `it selects more than ${MAX_PARAMETER_VALUES} values` };
      for (let i = from; i < values.length; i++) chars += values[i]!.length;
      if (chars > maxChars) return { problem: 'the values it selects are longer than the body itself' };
    }
  } catch {
    // A descendant segment ("..") walks a bounded depth, and an object's JSON text is written
    // recursively: a body nested deeper than either goes is the sender's doing, a 400.
    return { problem: 'the JSON body is nested too deeply' };
  }
  return values;
}

/**
 * The values a top-level member binds by name (null items of an array left out, as by a
 * JSONPath); null when it does not bind (null, an object, an array holding an object or array).
 * An array longer than MAX_PARAMETER_VALUES gives its first MAX_PARAMETER_VALUES + 1 values:
 * enough for a parameter that reads it to be refused, and no more to carry for one that does not.
 */
export function namedValues(value: unknown): string[] | null {
  const text = scalarText(value);
  if (text !== null) return [text];
  if (!Array.isArray(value)) return null;
  const values: string[] = [];
  for (const item of value) {
    if (item === null) continue;
    const t = scalarText(item);
    if (t === null) return null;
    if (values.length <= MAX_PARAMETER_VALUES) values.push(t);
  }
  return values;
}
