// JSONPath (RFC 9535) for parameters that read a JSON request body: compiled once with the file,
// evaluated per request by the runtime (runtime/sources.ts). json-p3 follows the RFC (filters
// written `?@.n > 2`, negative indexes, escaped names) and compiles a path into a reusable query;
// it is loaded on the first path, so an application without one never loads it.

import { createRequire } from 'node:module';

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

export type CompiledJsonPath = { readonly ok: true; readonly query: JsonPathQuery } | { readonly ok: false; readonly problem: string };

type JsonP3 = typeof import('json-p3');
let library: JsonP3 | null = null;
function jsonP3(): JsonP3 {
  library ??= createRequire(import.meta.url)('json-p3') as JsonP3;
  return library;
}

// Parameters on many endpoints repeat the same few paths: each distinct text is compiled once
// per process, and its query (read-only) shared. Bounded, since a server reloads configurations.
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

function compile(path: string): CompiledJsonPath {
  if (path.trim() === '') return { ok: false, problem: 'it is empty (a path starts with "$", such as $.issue.title)' };
  // The library's own words for these ("can't backup beyond start") do not help.
  if (/(^|[^.])\.\s*$/.test(path)) return { ok: false, problem: 'it ends with "." where a name is expected' };
  let compiled: import('json-p3').JSONPathQuery;
  try {
    compiled = jsonP3().compile(path);
  } catch (error) {
    return { ok: false, problem: problemOf(error) };
  }
  return { ok: true, query: { select: (document) => values(compiled.lazyQuery(document as import('json-p3').JSONValue)) } };
}

function* values(nodes: Iterable<import('json-p3').JSONPathNode>): Iterable<unknown> {
  for (const node of nodes) yield node.value;
}

/** "unexpected ')' ('e < )].id':20)": the words, and where, counted from 1 as an editor does. */
function problemOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const located = /^(.*) \('.*':(\d+)\)$/s.exec(message);
  if (located === null) return message;
  return `${located[1]} at character ${Number(located[2]) + 1}`;
}
