// The values of a parameter with a source (docs/language.md, "<parameter>"): a request header,
// or what a JSONPath, compiled with the file, selects in the JSON body the body reader parsed
// once (json-body.ts). The same code binds for serve and dry-run; node:http stays out: headers
// come as a plain record.

import type { ParameterDeclaration } from '../compiler/ast.js';
import { addSelected } from './json-values.js';

/** Request headers by lower-case name, each value as sent (node:http's headersDistinct). */
export type RequestHeaders = Readonly<Record<string, readonly string[] | undefined>>;

/** A parsed JSON body; `document` is any JSON value, null included. */
export interface JsonBody {
  readonly document: unknown;
}

/** What a request offers parameters with a source. */
export interface RequestSources {
  readonly headers: RequestHeaders;
  /** null: the request has no JSON body. */
  readonly json: JsonBody | null;
}

export const NO_HEADERS: RequestHeaders = Object.freeze({});
export const NO_SOURCES: RequestSources = Object.freeze({ headers: NO_HEADERS, json: null });

/** Values of a parameter with a source: undefined when not sent, or why they cannot be read. */
export type SourcedValues = readonly string[] | undefined | { readonly problem: string };

export function sourcedValues(declaration: ParameterDeclaration, sources: RequestSources): SourcedValues {
  const source = declaration.source;
  switch (source.kind) {
    case 'name':
      return undefined;
    case 'header':
      // Own members only: "constructor" and "__proto__" are header names too.
      return Object.hasOwn(sources.headers, source.header) ? sources.headers[source.header] : undefined;
    case 'jsonpath': {
      if (sources.json === null) return undefined;
      const values: string[] = [];
      try {
        for (const node of source.query.select(sources.json.document)) addSelected(node, values);
      } catch {
        // A descendant segment ("..") walks a bounded depth, and an object's JSON text is written
        // recursively: a body nested deeper than either goes is the sender's doing, a 400.
        return { problem: `cannot be read with ${source.path}: the JSON body is nested too deeply` };
      }
      return values.length === 0 ? undefined : values;
    }
  }
}
