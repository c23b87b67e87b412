// Where a <parameter> takes its values from: by its name (the default), a JSONPath into a JSON
// body, or a request header (docs/language.md, "<parameter>"). Decided and checked once, here;
// the runtime only reads the compiled source (runtime/sources.ts).

import type { ParameterSource } from './ast.js';
import type { CompileContext, ReadElement } from './context.js';
import { authorJsonPath } from './json-path.js';
import { internalized } from './retained.js';

export const BY_NAME: ParameterSource = Object.freeze({ kind: 'name' });

/** RFC 9110 field-name: a token. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** The parameter's source; undefined after reporting why it has none. */
export function parameterSource(ctx: CompileContext, read: ReadElement): ParameterSource | undefined {
  const jsonpath = read.attr('jsonpath');
  const header = read.attr('header');
  if (jsonpath === undefined && header === undefined) return BY_NAME;
  if (jsonpath !== undefined && header !== undefined) {
    // At the one written second: the first is what the author meant first.
    const second =
      jsonpath.position.line > header.position.line || (jsonpath.position.line === header.position.line && jsonpath.position.column > header.position.column)
        ? jsonpath
        : header;
    ctx.diagnostics.report('conflicting-parameter-source', second.position);
    return undefined;
  }
  if (header !== undefined) {
    if (!HEADER_NAME.test(header.value)) {
      ctx.diagnostics.report('invalid-header-name', header.position, header.value);
      return undefined;
    }
    return { kind: 'header', header: internalized(header.value.toLowerCase()) };
  }
  const query = authorJsonPath(ctx, jsonpath!);
  if (query === null) return undefined;
  return { kind: 'jsonpath', path: internalized(jsonpath!.value), query };
}
