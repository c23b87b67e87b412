// The values of a parameter with a source (docs/language.md, "<parameter>"): a request header,
// or what a JSONPath, compiled with the file, selects in the JSON body the body reader parsed
// once (json-body.ts). The same code binds for serve and dry-run; node:http stays out: headers
// come as a plain record.

import type { ParameterDeclaration } from '../compiler/ast.js';
import type { JsonPathQuery } from '../compiler/json-path.js';
import type { SelectionProblem } from './json-values.js';

/** Request headers by lower-case name, each value as sent (node:http's headersDistinct). */
export type RequestHeaders = Readonly<Record<string, readonly string[] | undefined>>;

/** A parsed JSON body (json-body.ts). */
export interface JsonBody {
  /**
   * The document, any JSON value, null included, when this thread parsed it; absent for a body
   * parsed on another thread (server/body/json-thread.ts), of which only the values came back.
   */
  readonly document?: unknown;
  /** The values the JSONPath `path` (compiled as `query`) selects, or why they cannot be read. */
  select(path: string, query: JsonPathQuery): readonly string[] | SelectionProblem;
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
      const values = sources.json.select(source.path, source.query);
      if ('problem' in values) return { problem: `cannot be read with ${source.path}: ${values.problem}` };
      return values.length === 0 ? undefined : values;
    }
  }
}
