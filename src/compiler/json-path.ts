// JSONPath (RFC 9535), the one language of every `jsonpath` attribute (docs/language.md,
// "JSONPath"): a parameter's, read from a JSON request body (runtime/sources.ts), and an
// output's, read from a task's JSON answer (tasks/http-request/outputs.ts), so that a path
// selects the same in both. Compiled once with the file, evaluated per request. json-p3
// follows the RFC (filters written `?@.n > 2`, negative indexes, escaped names, the functions
// length(), count(), match(), search() and value()) and compiles a path into a reusable query;
// it is loaded on the first path, so an application without one never loads it. Forms of other
// dialects are named by json-path-dialects.ts, so that the diagnostic says what to write.

import { createRequire } from 'node:module';
import type { CompileContext } from './context.js';
import { formOfOtherDialect, formReadOtherwise, masked, type DialectForm } from './json-path-dialects.js';
import type { XmlAttribute } from './xml-tree.js';

/** A compiled JSONPath: the nodes it selects in a parsed JSON document, in document order. */
export interface JsonPathQuery {
  /**
   * Yields the selected nodes one by one, so a caller can stop early; throws when the document is
   * nested deeper than a descendant segment may walk. Lazy also because json-p3's eager query
   * spreads a node's children into a call's arguments, which overflows the stack on an array of
   * a few hundred thousand items: a long flat array is no deep nesting.
   */
  select(document: unknown): Iterable<unknown>;
}

export type CompiledJsonPath =
  | { readonly ok: true; readonly query: JsonPathQuery }
  /** `form`: a construct of another dialect (jsonpath-plus, Jayway) the path is refused for, else null and `problem` says why. */
  | { readonly ok: false; readonly problem: string; readonly form: DialectForm | null };

type JsonP3 = typeof import('json-p3');
let library: JsonP3 | null = null;
function jsonP3(): JsonP3 {
  library ??= createRequire(import.meta.url)('json-p3') as JsonP3;
  return library;
}

// Parameters and outputs on many endpoints repeat the same few paths: each distinct text is
// compiled once per process, and its query (read-only) shared. Bounded, since a server reloads
// configurations.
const compiledPaths = new Map<string, CompiledJsonPath>();
const MEMO_LIMIT = 10_000;

export function compileJsonPath(path: string): CompiledJsonPath {
  let compiled = compiledPaths.get(path);
  if (compiled === undefined) {
    compiled = compile(path);
    if (compiledPaths.size >= MEMO_LIMIT) compiledPaths.clear();
    compiledPaths.set(path, compiled);
  }
  return compiled;
}

/** The query an attribute holds, or null after reporting, at the attribute, why it is not one. */
export function authorJsonPath(ctx: CompileContext, attr: XmlAttribute): JsonPathQuery | null {
  const compiled = compileJsonPath(attr.value);
  if (compiled.ok) return compiled.query;
  if (compiled.form !== null) ctx.diagnostics.report('unsupported-jsonpath', attr.position, attr.value, compiled.form.construct, compiled.form.advice);
  else ctx.diagnostics.report('invalid-jsonpath', attr.position, attr.value, compiled.problem);
  return null;
}

function refused(problem: string): CompiledJsonPath {
  return { ok: false, problem, form: null };
}

function otherDialect(form: DialectForm): CompiledJsonPath {
  return { ok: false, problem: `${form.construct} is not RFC 9535 JSONPath: ${form.advice}`, form };
}

function compile(path: string): CompiledJsonPath {
  if (path.trim() === '') return refused('it is empty (a path starts with "$", such as $.issue.title)');
  // The library's own words for these ("can't backup beyond start", "TOKEN_ERROR") do not help.
  if (/(^|[^.])\.\s*$/.test(path)) return refused('it ends with "." where a name is expected');
  if (path !== path.trim()) return refused('it begins or ends with a space');
  if (!path.startsWith('$')) return refused(`it must start with "$", the root${/^[A-Za-z_]/.test(path) ? `, as in $.${path}` : ''}`);
  const readOtherwise = formReadOtherwise(path);
  if (readOtherwise !== null) return otherDialect(readOtherwise);
  let compiled: import('json-p3').JSONPathQuery;
  try {
    compiled = jsonP3().compile(path);
  } catch (error) {
    const form = formOfOtherDialect(path);
    if (form !== null) return otherDialect(form);
    return refused(problemOf(path, error));
  }
  return { ok: true, query: { select: (document) => values(compiled.lazyQuery(document as import('json-p3').JSONValue)) } };
}

function* values(nodes: Iterable<import('json-p3').JSONPathNode>): Iterable<unknown> {
  for (const node of nodes) yield node.value;
}

/** "unexpected ')' ('e < )].id':20)": the words, and where, counted from 1 as an editor does. */
function problemOf(path: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const located = /^(.*) \('.*':(\d+)\)$/s.exec(message);
  if (located === null) return message;
  const at = Number(located[2]);
  // A name with a space in it, written as a dot's name: `$.first name`.
  const before = masked(path.slice(0, at));
  const outsideBrackets = before.split('[').length === before.split(']').length;
  if (outsideBrackets && /^[A-Za-z_]/.test(path.slice(at)) && /\.[A-Za-z_][\w-]*\s+$/.test(before)) {
    return `a space at character ${at}: a name with a space in it is quoted, as in $['first name']`;
  }
  return `${located[1]} at character ${at + 1}`;
}
